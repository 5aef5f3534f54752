#pragma once
// What gpu_bench's modes share: the device, a config on a given store,
// medians, a program's binary.

#include "kcache/opencl.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "kcache/service/service_api.hpp"

namespace gpu_bench {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

struct Device {
    cl_device_id device = nullptr;
    cl_context context = nullptr;
};

// The first GPU of any platform, with a context; with GPU_BENCH_ANY_DEVICE=1
// the first device of any type (to try the modes on PoCL).
inline Device first_gpu() {
    Device d;
    const char* any = std::getenv("GPU_BENCH_ANY_DEVICE");
    const cl_device_type type =
        any != nullptr && std::string(any) == "1" ? CL_DEVICE_TYPE_ALL : CL_DEVICE_TYPE_GPU;
    cl_platform_id platforms[8] = {};
    cl_uint n = 0;
    clGetPlatformIDs(8, platforms, &n);
    for (cl_uint i = 0; i < n && !d.device; ++i) {
        if (clGetDeviceIDs(platforms[i], type, 1, &d.device, nullptr) != CL_SUCCESS) {
            d.device = nullptr;
        }
    }
    if (d.device) {
        cl_int err = CL_SUCCESS;
        d.context = clCreateContext(nullptr, 1, &d.device, nullptr, nullptr, &err);
    }
    return d;
}

// The effective configuration with its store moved to `dir`.
inline kcache::Config config_at(const std::filesystem::path& dir) {
    kcache::Config c;
    std::string err;
    kcache::load_config(c, err);
    c.dir = dir;
    return c;
}

inline std::vector<std::uint8_t> binary_of(cl_program p) {
    std::size_t size = 0;
    clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr);
    std::vector<std::uint8_t> bytes(size);
    unsigned char* data = bytes.data();
    clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof(data), &data, nullptr);
    return bytes;
}

// Long-lived-process measurements (hit_bench.cpp): hit vs floor with a new
// context per sample, the store hit's steps in place, the first hit of a
// fresh process vs the floor's, resident memory per 1,000 contexts.
int long_lived(const Device& d, const std::filesystem::path& root);
// Section 1b of long_lived() alone.
int hit_parts_only(const Device& d, const std::filesystem::path& root);
// Child modes of long_lived(): print a time in microseconds (child-first-hit:
// then the Cache::open part of it, and the close of program and cache after it).
int child_first_hit(const Device& d, const std::string& kernel, const std::filesystem::path& dir);
int child_first_steps(const Device& d, const std::string& kernel, const std::filesystem::path& dir);
int child_first_floor(const Device& d, const std::string& kernel,
                      const std::filesystem::path& file);

}  // namespace gpu_bench
