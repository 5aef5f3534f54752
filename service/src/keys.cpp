#include "kcache/service/keys.hpp"
#include "kcache/kernels/registry.hpp"

#include <algorithm>

namespace kcache::service {

store::KeyFields aot_key_fields(const std::string& target, const device_db::CompileInput& input) {
    store::KeyFields f;
    device_db::set_input_fields(f, input);
    f.target_format = "aot:" + target;
    f.vendor_id = 0x8086;
    f.compiler_id = "ocloc";
    return f;
}

IlTarget il_target(const device_db::CompileInput& input) {
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

store::KeyFields il_key_fields(const IlTarget& target, const device_db::CompileInput& input) {
    store::KeyFields f;
    device_db::set_input_fields(f, input);
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
