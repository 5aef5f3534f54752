// Probes DeviceIdentity through clGetDeviceInfo / clGetPlatformInfo. Core queries must
// succeed; extension queries are asked only when the extension is listed, and their
// failure leaves the optional field empty (PoCL, for one, has none of them).
#include "kcache/device_db/identity.hpp"

#include "kcache/common/hex.hpp"

#include <CL/cl_ext.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "kcache/common/cl_error.hpp"
#include "kcache/device_db/compiler_files.hpp"

namespace kcache::device_db {
namespace {

DeviceDbError cl_error(const char* what, cl_int status) {
    return DeviceDbError{
        DeviceDbErrc::opencl, std::string(what) + " failed (" + cl_error_name(status) + ")", {}};
}

// Removes the string's terminating zeros and trailing blanks.
std::string trimmed(std::string text) {
    while (!text.empty() && (text.back() == '\0' || text.back() == ' ')) {
        text.pop_back();
    }
    return text;
}

// A string query in one call when it fits a buffer of this size (a hit's
// identity probe asks for several); a longer one (an extension list) is
// asked for its size, then its value.
constexpr std::size_t kOneCallString = 2048;

template <class Getter>
Result<std::string, DeviceDbError> query_string(Getter get, const char* what) {
    char few[kOneCallString];
    std::size_t size = 0;
    if (get(sizeof few, few, &size) == CL_SUCCESS && size <= sizeof few) {
        return trimmed(std::string(few, size));
    }
    cl_int status = get(0, nullptr, &size);
    if (status != CL_SUCCESS) {
        return fail(cl_error(what, status));
    }
    std::string text(size, '\0');
    status = get(size, text.data(), nullptr);
    if (status != CL_SUCCESS) {
        return fail(cl_error(what, status));
    }
    return trimmed(std::move(text));
}

Result<std::string, DeviceDbError> device_string(cl_device_id device, cl_device_info param,
                                                 const char* what) {
    return query_string(
        [&](std::size_t n, void* out, std::size_t* ret) {
            return clGetDeviceInfo(device, param, n, out, ret);
        },
        what);
}

Result<std::string, DeviceDbError> platform_string(cl_platform_id platform, cl_platform_info param,
                                                   const char* what) {
    return query_string(
        [&](std::size_t n, void* out, std::size_t* ret) {
            return clGetPlatformInfo(platform, param, n, out, ret);
        },
        what);
}

template <class T>
Result<T, DeviceDbError> device_value(cl_device_id device, cl_device_info param, const char* what) {
    T value{};
    cl_int status = clGetDeviceInfo(device, param, sizeof(T), &value, nullptr);
    if (status != CL_SUCCESS) {
        return fail(cl_error(what, status));
    }
    return value;
}

// An extension query: nullopt when the driver refuses it.
template <class T>
std::optional<T> optional_value(cl_device_id device, cl_device_info param) {
    T value{};
    if (clGetDeviceInfo(device, param, sizeof(T), &value, nullptr) != CL_SUCCESS) {
        return std::nullopt;
    }
    return value;
}

std::vector<std::string> split_words(const std::string& text) {
    std::vector<std::string> words;
    std::istringstream in(text);
    for (std::string w; in >> w;) {
        words.push_back(w);
    }
    return words;
}

DeviceType device_type(cl_device_type type) {
    if (type & CL_DEVICE_TYPE_GPU) {
        return DeviceType::gpu;
    }
    if (type & CL_DEVICE_TYPE_CPU) {
        return DeviceType::cpu;
    }
    if (type & CL_DEVICE_TYPE_ACCELERATOR) {
        return DeviceType::accelerator;
    }
    return DeviceType::other;
}

// Fills the fields that come from optional extensions.
void probe_extensions(cl_device_id device, DeviceIdentity& id) {
    if (id.has_extension("cl_intel_device_attribute_query")) {
        id.pci_device_id = optional_value<cl_uint>(device, CL_DEVICE_ID_INTEL);
        id.ip_version = optional_value<cl_uint>(device, CL_DEVICE_IP_VERSION_INTEL);
    }
    if (id.has_extension("cl_khr_device_uuid")) {
        id.device_uuid = optional_value<Uuid>(device, CL_DEVICE_UUID_KHR);
        id.driver_uuid = optional_value<Uuid>(device, CL_DRIVER_UUID_KHR);
    }
    if (id.has_extension("cl_khr_pci_bus_info")) {
        auto info = optional_value<cl_device_pci_bus_info_khr>(device, CL_DEVICE_PCI_BUS_INFO_KHR);
        if (info) {
            id.pci_bus =
                PciAddress{info->pci_domain, info->pci_bus, info->pci_device, info->pci_function};
        }
    }
}

// Reads one fixed-size core query into `out`.
template <class T>
Status<DeviceDbError> read_into(cl_device_id device, cl_device_info param, const char* what,
                                T& out) {
    auto value = device_value<T>(device, param, what);
    if (!value) {
        return fail(value.error());
    }
    out = *value;
    return Ok{};
}

// Fills the core fixed-size fields; fails on the first query the driver refuses.
Status<DeviceDbError> probe_core(cl_device_id device, DeviceIdentity& id) {
    cl_device_type type = 0;
    const Status<DeviceDbError> results[] = {
        read_into(device, CL_DEVICE_VENDOR_ID, "CL_DEVICE_VENDOR_ID", id.vendor_id),
        read_into(device, CL_DEVICE_TYPE, "CL_DEVICE_TYPE", type),
        read_into(device, CL_DEVICE_ADDRESS_BITS, "CL_DEVICE_ADDRESS_BITS", id.address_bits),
        read_into(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, "CL_DEVICE_MAX_WORK_GROUP_SIZE",
                  id.max_work_group_size),
        read_into(device, CL_DEVICE_MAX_COMPUTE_UNITS, "CL_DEVICE_MAX_COMPUTE_UNITS",
                  id.compute_units),
        read_into(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
                  id.max_mem_alloc),
    };
    for (const Status<DeviceDbError>& r : results) {
        if (!r) {
            return fail(r.error());
        }
    }
    id.type = device_type(type);
    return Ok{};
}

// Fills the string fields of the device and of its platform; `platform`
// gets the device's platform.
Status<DeviceDbError> probe_strings(cl_device_id device, DeviceIdentity& id,
                                    cl_platform_id& platform_out) {
    struct Field {
        std::string* out;
        cl_device_info param;
        const char* what;
    };
    const Field fields[] = {
        {&id.name, CL_DEVICE_NAME, "CL_DEVICE_NAME"},
        {&id.vendor, CL_DEVICE_VENDOR, "CL_DEVICE_VENDOR"},
        {&id.driver_version, CL_DRIVER_VERSION, "CL_DRIVER_VERSION"},
        {&id.device_version, CL_DEVICE_VERSION, "CL_DEVICE_VERSION"},
        {&id.opencl_c_version, CL_DEVICE_OPENCL_C_VERSION, "CL_DEVICE_OPENCL_C_VERSION"},
    };
    for (const Field& f : fields) {
        auto text = device_string(device, f.param, f.what);
        if (!text) {
            return fail(text.error());
        }
        *f.out = std::move(*text);
    }
    auto extensions = device_string(device, CL_DEVICE_EXTENSIONS, "CL_DEVICE_EXTENSIONS");
    auto platform = device_value<cl_platform_id>(device, CL_DEVICE_PLATFORM, "CL_DEVICE_PLATFORM");
    if (!extensions || !platform) {
        return fail(!extensions ? extensions.error() : platform.error());
    }
    id.extensions = split_words(*extensions);
    auto pname = platform_string(*platform, CL_PLATFORM_NAME, "CL_PLATFORM_NAME");
    auto pversion = platform_string(*platform, CL_PLATFORM_VERSION, "CL_PLATFORM_VERSION");
    if (!pname || !pversion) {
        return fail(!pname ? pname.error() : pversion.error());
    }
    id.platform_name = std::move(*pname);
    id.platform_version = std::move(*pversion);
    platform_out = *platform;
    return Ok{};
}

}  // namespace

bool DeviceIdentity::has_extension(const std::string& ext) const {
    return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

std::string PciAddress::to_string() const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device, function);
    return buf;
}

const char* to_string(DeviceType type) {
    switch (type) {
        case DeviceType::cpu:
            return "cpu";
        case DeviceType::gpu:
            return "gpu";
        case DeviceType::accelerator:
            return "accelerator";
        case DeviceType::other:
            return "other";
    }
    return "other";
}

std::vector<std::pair<std::string, std::string>> key_fields(const DeviceIdentity& id) {
    auto hex_or_empty = [](const std::optional<std::uint32_t>& v) {
        return v ? hex_id(*v) : std::string();
    };
    auto uuid_or_empty = [](const std::optional<Uuid>& u) {
        return u ? uuid_to_string(*u) : std::string();
    };
    return {
        {"vendor_id", hex_id(id.vendor_id)},
        {"device_name", id.name},
        {"device_type", to_string(id.type)},
        {"pci_device_id", hex_or_empty(id.pci_device_id)},
        {"ip_version", hex_or_empty(id.ip_version)},
        {"driver_version", id.driver_version},
        {"device_version", id.device_version},
        {"platform_name", id.platform_name},
        {"platform_version", id.platform_version},
        {"opencl_c_version", id.opencl_c_version},
        {"address_bits", std::to_string(id.address_bits)},
        {"device_uuid", uuid_or_empty(id.device_uuid)},
        {"driver_uuid", uuid_or_empty(id.driver_uuid)},
        {"compiler_files", id.compiler_files},
    };
}

std::string jit_compiler_id(const DeviceIdentity& id) {
    std::string out = "jit:" + id.driver_version + ":" +
                      (id.driver_uuid ? to_hex(*id.driver_uuid) : std::string());
    if (!id.compiler_files.empty()) {
        out += ":" + id.compiler_files;
    }
    return out;
}

std::string uuid_to_string(const Uuid& uuid) {
    std::string out = to_hex(uuid);
    for (std::size_t at : {20, 16, 12, 8}) {  // 8-4-4-4-12 digits
        out.insert(at, 1, '-');
    }
    return out;
}

Result<DeviceIdentity, DeviceDbError> probe(cl_device_id device) {
    DeviceIdentity id;
    if (auto s = probe_core(device, id); !s) {
        return fail(s.error());
    }
    cl_platform_id platform = nullptr;
    if (auto s = probe_strings(device, id, platform); !s) {
        return fail(s.error());
    }
    id.compiler_files = compiler_files_digest(compiler_files(platform));
    id.fp16 = id.has_extension("cl_khr_fp16");
    id.fp64 = id.has_extension("cl_khr_fp64");
    probe_extensions(device, id);
    return id;
}

namespace {

// Appends the devices of `platform` to `out`, or the reason they are missing.
void list_platform(cl_platform_id platform, OpenClListing& out) {
    cl_uint n = 0;
    cl_int status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
    if (status == CL_DEVICE_NOT_FOUND || (status == CL_SUCCESS && n == 0)) {
        return;
    }
    std::vector<cl_device_id> devices(n);
    if (status == CL_SUCCESS) {
        status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr);
    }
    if (status != CL_SUCCESS) {
        auto name = platform_string(platform, CL_PLATFORM_NAME, "CL_PLATFORM_NAME");
        out.skipped.push_back((name ? *name : std::string("a platform")) + ": " +
                              cl_error("clGetDeviceIDs", status).message);
        return;
    }
    for (cl_device_id device : devices) {
        auto identity = probe(device);
        if (identity) {
            out.devices.push_back(OpenClDevice{platform, device, std::move(*identity)});
        } else {
            out.skipped.push_back("a device: " + identity.error().message);
        }
    }
}

}  // namespace

Result<OpenClListing, DeviceDbError> list_opencl_devices() {
    OpenClListing out;
    cl_uint count = 0;
    cl_int status = clGetPlatformIDs(0, nullptr, &count);
    if (status == CL_PLATFORM_NOT_FOUND_KHR || (status == CL_SUCCESS && count == 0)) {
        return out;
    }
    std::vector<cl_platform_id> platforms(count);
    if (status == CL_SUCCESS) {
        status = clGetPlatformIDs(count, platforms.data(), nullptr);
    }
    if (status != CL_SUCCESS) {
        return fail(cl_error("clGetPlatformIDs", status));
    }
    for (cl_platform_id platform : platforms) {
        list_platform(platform, out);
    }
    return out;
}

}  // namespace kcache::device_db
