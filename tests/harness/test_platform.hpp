#pragma once
// Which OpenCL platform the device tests run on: PoCL by default (what CI
// has), or the platform named by KCACHE_TEST_PLATFORM (a substring of its
// name, e.g. "NVIDIA") to run the same tests on a real GPU by hand.

#include <cstdlib>
#include <string>

#include "kcache/opencl.h"

namespace kcache::test {

inline std::string test_platform_name() {
    const char* v = std::getenv("KCACHE_TEST_PLATFORM");
    return v && *v ? v : "Portable Computing Language";
}

// The first OpenCL platform whose name contains test_platform_name(), or
// nullptr when there is none.
inline cl_platform_id find_test_platform() {
    cl_platform_id platforms[16] = {};
    cl_uint n = 0;
    if (clGetPlatformIDs(16, platforms, &n) != CL_SUCCESS) {
        return nullptr;
    }
    const std::string wanted = test_platform_name();
    for (cl_uint i = 0; i < n && i < 16; ++i) {
        char name[256] = {};
        clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
        if (std::string(name).find(wanted) != std::string::npos) {
            return platforms[i];
        }
    }
    return nullptr;
}

// The first device of find_test_platform(), or nullptr when there is none.
inline cl_device_id find_test_device() {
    cl_platform_id platform = find_test_platform();
    cl_device_id device = nullptr;
    if (platform == nullptr ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) {
        return nullptr;
    }
    return device;
}

}  // namespace kcache::test
