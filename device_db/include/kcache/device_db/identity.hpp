#pragma once
// DeviceIdentity: what decides the bytes a driver compiler produces for a device
// (docs/design.md, "Identity and the key"), probed from OpenCL.

#include "kcache/opencl.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/device_db/error.hpp"
#include "kcache/device_db/ids.hpp"

namespace kcache::device_db {

enum class DeviceType { cpu, gpu, accelerator, other };

using Uuid = std::array<std::uint8_t, 16>;

// PCI location from cl_khr_pci_bus_info (or sysfs).
struct PciAddress {
    std::uint32_t domain = 0;
    std::uint32_t bus = 0;
    std::uint32_t device = 0;
    std::uint32_t function = 0;

    // "dddd:bb:dd.f", the form sysfs uses.
    std::string to_string() const;
    friend bool operator==(const PciAddress&, const PciAddress&) = default;
};

struct DeviceIdentity {
    // Identity fields (docs/design.md); optional ones are absent when the driver lacks the
    // extension that reports them.
    std::uint32_t vendor_id = 0;
    std::string vendor;
    std::string name;
    DeviceType type = DeviceType::other;
    std::optional<std::uint32_t> pci_device_id;  // CL_DEVICE_ID_INTEL
    std::optional<std::uint32_t> ip_version;     // CL_DEVICE_IP_VERSION_INTEL, raw
    std::string driver_version;
    std::string device_version;
    std::string platform_name;
    std::string platform_version;
    std::string opencl_c_version;
    std::uint32_t address_bits = 0;
    std::optional<Uuid> device_uuid;    // cl_khr_device_uuid
    std::optional<Uuid> driver_uuid;    // cl_khr_device_uuid
    std::optional<PciAddress> pci_bus;  // cl_khr_pci_bus_info
    // 16 hex digits naming the files of the driver's compiler as stat() sees
    // them (compiler_files.hpp): its library, the compiler libraries it
    // links, the data files its compiler reads; "" when its library is unknown.
    std::string compiler_files;

    // Capabilities callers ask for; not part of the key by themselves.
    std::vector<std::string> extensions;
    bool fp16 = false;
    bool fp64 = false;
    std::size_t max_work_group_size = 0;
    std::uint32_t compute_units = 0;
    std::uint64_t max_mem_alloc = 0;

    // True when `extensions` lists `name`.
    bool has_extension(const std::string& name) const;
};

// Reads `device`'s identity; fields of missing extensions stay empty. Returns
// DeviceDbErrc::opencl when a core query fails.
Result<DeviceIdentity, DeviceDbError> probe(cl_device_id device);

// One OpenCL device together with its probed identity.
struct OpenClDevice {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    DeviceIdentity identity;
};

struct OpenClListing {
    std::vector<OpenClDevice> devices;
    // One line per platform or device that could not be enumerated or probed, and why;
    // a broken platform does not hide the others.
    std::vector<std::string> skipped;
};

// Every device of every platform the ICD loader offers; no platform at all is an empty
// listing, a failing clGetPlatformIDs an DeviceDbErrc::opencl error.
Result<OpenClListing, DeviceDbError> list_opencl_devices();

// The identity fields that decide the code a driver generates, as (name, value) pairs in
// a fixed order; absent optional fields have the value "". For cache keys and for
// explaining a miss field by field. The PCI bus address and capabilities are left out:
// they follow from these or do not change the code.
std::vector<std::pair<std::string, std::string>> key_fields(const DeviceIdentity& identity);

// The compiler identity of the JIT key and of the driver canary:
// "jit:<driver version>:<driver UUID, hex>:<compiler_files>", without the
// last part when `compiler_files` is "" (an identity made by hand, or a
// driver whose library is not found).
std::string jit_compiler_id(const DeviceIdentity& identity);

// "cpu", "gpu", "accelerator", "other".
const char* to_string(DeviceType type);

// Lowercase "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string uuid_to_string(const Uuid& uuid);

}  // namespace kcache::device_db
