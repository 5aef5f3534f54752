#include <cstdio>
#include <string>
#include <vector>

#include "helper.hpp"
#include "kcache/common/hex.hpp"

#ifndef CL_DEVICE_UUID_KHR
#define CL_DEVICE_UUID_KHR 0x106A
#endif

namespace kcache::compiler::helper {
namespace {

// A string query of clGetPlatformInfo / clGetDeviceInfo (`get`).
template <class Handle, class Param>
std::string info_string(cl_int (*get)(Handle, Param, std::size_t, void*, std::size_t*), Handle h,
                        Param what) {
    std::size_t n = 0;
    if (get(h, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) {
        return {};
    }
    std::string s(n, '\0');
    get(h, what, n, s.data(), nullptr);
    return s.substr(0, s.find('\0'));
}

std::string platform_string(cl_platform_id p, cl_platform_info what) {
    return info_string(clGetPlatformInfo, p, what);
}

std::string device_string(cl_device_id d, cl_device_info what) {
    return info_string(clGetDeviceInfo, d, what);
}

// Lowercase hex of CL_DEVICE_UUID_KHR; empty without cl_khr_device_uuid.
std::string device_uuid_hex(cl_device_id d) {
    if (device_string(d, CL_DEVICE_EXTENSIONS).find("cl_khr_device_uuid") == std::string::npos) {
        return {};
    }
    unsigned char uuid[16] = {};
    if (clGetDeviceInfo(d, CL_DEVICE_UUID_KHR, sizeof uuid, uuid, nullptr) != CL_SUCCESS) {
        return {};
    }
    return to_hex(uuid, sizeof uuid);
}

// The device's identity in the selector's terms.
DeviceSelector identity_of(cl_platform_id p, cl_device_id d) {
    DeviceSelector id;
    id.platform_name = platform_string(p, CL_PLATFORM_NAME);
    id.device_name = device_string(d, CL_DEVICE_NAME);
    id.driver_version = device_string(d, CL_DRIVER_VERSION);
    clGetDeviceInfo(d, CL_DEVICE_VENDOR_ID, sizeof id.vendor_id, &id.vendor_id, nullptr);
    id.uuid_hex = device_uuid_hex(d);
    return id;
}

bool field_matches(const std::string& want, const std::string& have) {
    return want.empty() || want == have;
}

bool matches(const DeviceSelector& want, const DeviceSelector& have) {
    return field_matches(want.platform_name, have.platform_name) &&
           field_matches(want.device_name, have.device_name) &&
           field_matches(want.driver_version, have.driver_version) &&
           (want.vendor_id == 0 || want.vendor_id == have.vendor_id) &&
           field_matches(want.uuid_hex, have.uuid_hex);
}

std::string describe(const DeviceSelector& d) {
    char vendor[16];
    std::snprintf(vendor, sizeof vendor, "0x%x", d.vendor_id);
    return "'" + d.platform_name + "' / '" + d.device_name + "' driver '" + d.driver_version +
           "' vendor " + vendor + (d.uuid_hex.empty() ? "" : " uuid " + d.uuid_hex);
}

}  // namespace

Result<cl_device_id, Failure> select_device(const DeviceSelector& selector) {
    cl_uint np = 0;
    clGetPlatformIDs(0, nullptr, &np);
    std::vector<cl_platform_id> platforms(np);
    if (np > 0) {
        clGetPlatformIDs(np, platforms.data(), nullptr);
    }
    std::string seen;
    for (cl_platform_id p : platforms) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS) {
            continue;
        }
        std::vector<cl_device_id> devices(nd);
        clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devices.data(), nullptr);
        for (cl_device_id d : devices) {
            const DeviceSelector have = identity_of(p, d);
            if (matches(selector, have)) {
                return d;
            }
            seen += "; " + describe(have);
        }
    }
    if (seen.empty()) {
        // Nothing enumerated at all: a platform problem (no ICD, or one that
        // failed to start, e.g. under a too small address-space cap).
        return fail(Failure{ReplyStatus::driver_error, "no OpenCL device could be enumerated (" +
                                                           std::to_string(platforms.size()) +
                                                           " platforms)"});
    }
    return fail(Failure{
        ReplyStatus::device_not_found,
        "no OpenCL device matches " + describe(selector) + " (seen: " + seen.substr(2) + ")"});
}

}  // namespace kcache::compiler::helper
