// The entry points of driver_timeline.hpp: each forwards to the driver's.

#include "driver_timeline.hpp"

#include <dlfcn.h>

#include <chrono>

#include "kcache/opencl.h"

namespace gpu_bench {

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace gpu_bench

namespace {

using gpu_bench::now_ns;
using gpu_bench::Stamp;

thread_local std::vector<Stamp>* g_timeline = nullptr;

template <class F>
F next_definition(const char* name) {
    return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

// Calls the driver's `name` with `args`, noting it in the timeline.
template <class R, class... Args>
R forward(const char* name, R (*&driver)(Args...), Args... args) {
    if (driver == nullptr) {
        driver = next_definition<R (*)(Args...)>(name);
    }
    if (g_timeline == nullptr) {
        return driver(args...);
    }
    const std::int64_t in = now_ns();
    R r = driver(args...);
    g_timeline->push_back({name, in, now_ns()});
    return r;
}

}  // namespace

gpu_bench::TimelineRecording::TimelineRecording(std::vector<Stamp>* timeline) {
    g_timeline = timeline;
}

gpu_bench::TimelineRecording::~TimelineRecording() {
    g_timeline = nullptr;
}

extern "C" {
cl_program clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                     const cl_device_id* device_list, const size_t* lengths,
                                     const unsigned char** binaries, cl_int* binary_status,
                                     cl_int* errcode_ret) {
    static cl_program (*driver)(cl_context, cl_uint, const cl_device_id*, const size_t*,
                                const unsigned char**, cl_int*, cl_int*) = nullptr;
    return forward("clCreateProgramWithBinary", driver, context, num_devices, device_list, lengths,
                   binaries, binary_status, errcode_ret);
}

cl_int clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id* device_list,
                      const char* options, void(CL_CALLBACK* pfn_notify)(cl_program, void*),
                      void* user_data) {
    static cl_int (*driver)(cl_program, cl_uint, const cl_device_id*, const char*,
                            void(CL_CALLBACK*)(cl_program, void*), void*) = nullptr;
    return forward("clBuildProgram", driver, program, num_devices, device_list, options, pfn_notify,
                   user_data);
}

cl_int clGetContextInfo(cl_context context, cl_context_info name, size_t size, void* value,
                        size_t* size_ret) {
    static cl_int (*driver)(cl_context, cl_context_info, size_t, void*, size_t*) = nullptr;
    return forward("clGetContextInfo", driver, context, name, size, value, size_ret);
}

cl_int clGetDeviceInfo(cl_device_id device, cl_device_info name, size_t size, void* value,
                       size_t* size_ret) {
    static cl_int (*driver)(cl_device_id, cl_device_info, size_t, void*, size_t*) = nullptr;
    return forward("clGetDeviceInfo", driver, device, name, size, value, size_ret);
}

cl_int clRetainContext(cl_context context) {
    static cl_int (*driver)(cl_context) = nullptr;
    return forward("clRetainContext", driver, context);
}

cl_int clRetainProgram(cl_program program) {
    static cl_int (*driver)(cl_program) = nullptr;
    return forward("clRetainProgram", driver, program);
}
}
