#include "kcache/service/keys.hpp"
#include "kcache/common/hex.hpp"

namespace kcache::service {
namespace {

std::string uuid_hex(const std::optional<device_db::Uuid>& uuid) {
    return uuid ? to_hex(*uuid) : std::string();
}

}  // namespace

void set_input_fields(store::KeyFields& f, const CompileInput& input) {
    f.kernel_name = input.name;
    f.source_digest = kcache::sha256_hex(input.source);
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

std::optional<std::string> aot_target(const device_db::DeviceDb& db,
                                      const device_db::DeviceIdentity& device) {
    auto m = db.match(device);
    if (m.family == nullptr || m.family->ocloc_target.empty()) {
        return std::nullopt;
    }
    return m.family->ocloc_target;
}

}  // namespace kcache::service
