#include "kcache/service/keys.hpp"
#include "kcache/common/hex.hpp"
#include "kcache/common/sha256.hpp"
#include "kcache/kernels/registry.hpp"

#include <algorithm>

#include <string_view>

namespace kcache::service {
namespace {

std::string uuid_hex(const std::optional<device_db::Uuid>& uuid) {
    return uuid ? to_hex(*uuid) : std::string();
}

// The digest of a link's source and units, each text length-prefixed, so
// that no link shares it with another link or with a build of one source.
std::string link_digest(const CompileInput& input) {
    Sha256 h;
    const auto field = [&h](std::string_view s) {
        h.update(std::to_string(s.size()) + ":");
        h.update(s);
    };
    field("kcache link");
    field(input.source);
    for (const LinkUnit& u : input.link) {
        field(u.source);
        field(u.options);
        field(std::to_string(u.headers.size()));
        for (const auto& [name, text] : u.headers) {
            field(name);
            field(text);
        }
    }
    return to_hex(h.finish());
}

}  // namespace

void set_input_fields(store::KeyFields& f, const CompileInput& input) {
    f.kernel_name = input.name;
    f.source_digest = input.link.empty() ? kcache::sha256_hex(input.source) : link_digest(input);
    f.entry_points = input.entry_points;
    f.build_options = input.options;
}

store::KeyFields jit_device_fields(const device_db::DeviceIdentity& device) {
    store::KeyFields f;
    f.target_format = "native";
    f.vendor_id = device.vendor_id;
    f.device_name = device.name;
    f.pci_device_id = device.pci_device_id.value_or(0);
    f.ip_version = device.ip_version.value_or(0);
    f.driver_version = device.driver_version;
    f.platform_name = device.platform_name;
    f.platform_version = device.platform_version;
    f.opencl_c_version = device.opencl_c_version;
    f.address_bits = device.address_bits;
    f.device_uuid = uuid_hex(device.device_uuid);
    f.driver_uuid = uuid_hex(device.driver_uuid);
    f.compiler_id = device_db::jit_compiler_id(device);
    return f;
}

store::KeyFields jit_key_fields(const device_db::DeviceIdentity& device,
                                const CompileInput& input) {
    store::KeyFields f = jit_device_fields(device);
    set_input_fields(f, input);
    return f;
}

store::KeyFields aot_key_fields(const std::string& target, const CompileInput& input) {
    store::KeyFields f;
    set_input_fields(f, input);
    f.target_format = "aot:" + target;
    f.vendor_id = 0x8086;
    f.compiler_id = "ocloc";
    return f;
}

IlTarget il_target(const CompileInput& input) {
    IlTarget t;
    if (!input.link.empty()) {
        return t;
    }
    auto variant = kernels::parse_variant(input.name);
    if (!variant) {
        return t;
    }
    auto rendered = kernels::render(*variant);
    if (rendered && rendered->source == input.source && rendered->options == input.options) {
        t.extensions = rendered->required_extensions;
        std::sort(t.extensions.begin(), t.extensions.end());
        t.extensions.erase(std::unique(t.extensions.begin(), t.extensions.end()),
                           t.extensions.end());
    }
    return t;
}

store::KeyFields il_key_fields(const IlTarget& target, const CompileInput& input) {
    store::KeyFields f;
    set_input_fields(f, input);
    f.target_format = "spirv:" + target.spirv_version + ":";
    for (std::size_t i = 0; i < target.extensions.size(); ++i) {
        f.target_format += (i ? "+" : "") + target.extensions[i];
    }
    f.compiler_id = "spirv";
    return f;
}

std::vector<std::string> missing_extensions(const IlTarget& target,
                                            const device_db::DeviceIdentity& device) {
    std::vector<std::string> missing;
    for (const std::string& e : target.extensions) {
        if (!device.has_extension(e)) {
            missing.push_back(e);
        }
    }
    return missing;
}

bool accepts_il(const device_db::DeviceIdentity& device) {
    return device.has_extension("cl_khr_il_program");
}

std::optional<std::string> aot_target(const device_db::DeviceDb& db,
                                      const device_db::DeviceIdentity& device) {
    auto m = db.match(device);
    if (m.family == nullptr || m.family->ocloc_target.empty()) {
        return std::nullopt;
    }
    return m.family->ocloc_target;
}

}  // namespace kcache::service
