// The JIT key of a device and a compile input (jit_key.hpp).

#include "kcache/device_db/jit_key.hpp"

#include <optional>
#include <string_view>

#include "kcache/common/hex.hpp"
#include "kcache/common/sha256.hpp"

namespace kcache::device_db {
namespace {

std::string uuid_hex(const std::optional<Uuid>& uuid) {
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

store::KeyFields jit_device_fields(const DeviceIdentity& device) {
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
    f.compiler_id = jit_compiler_id(device);
    return f;
}

store::KeyFields jit_key_fields(const DeviceIdentity& device, const CompileInput& input) {
    store::KeyFields f = jit_device_fields(device);
    set_input_fields(f, input);
    return f;
}

}  // namespace kcache::device_db
