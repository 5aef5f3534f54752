// A test-only OpenCL loader layer (OPENCL_LAYERS=libkcache_count_layer.so)
// that counts the OpenCL calls of its process's main thread (the one that
// asks kcache for programs), for the hit path's budget (hit_work_test.cpp):
// every query (clGet*Info, clGetPlatformIDs, clGetDeviceIDs) and every
// program made or built, whoever on that thread makes them; the calls of
// other threads (the releaser's sweeps, whose timing varies) are counted
// apart. The process reads the counts through kcache_count_layer_read(),
// found with dlopen(RTLD_NOLOAD) on this file.
// Built only under tests/.

#include <CL/cl_layer.h>

#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "test_layer.hpp"

namespace {

cl_icd_dispatch& g_target = kcache::test::g_next;  // the next calls

// The counts, in the order kcache_count_layer_read() hands them out.
enum Count : std::size_t { queries, programs_made, builds, other_threads, kCounts };
std::atomic<std::uint64_t> g_counts[kCounts];

void bump(Count c) {
    const bool main_thread = ::gettid() == ::getpid();
    g_counts[main_thread ? c : other_threads].fetch_add(1, std::memory_order_relaxed);
}

cl_int CL_API_CALL platform_ids(cl_uint n, cl_platform_id* out, cl_uint* n_ret) {
    bump(queries);
    return g_target.clGetPlatformIDs(n, out, n_ret);
}

cl_int CL_API_CALL platform_info(cl_platform_id p, cl_platform_info name, size_t size, void* value,
                                 size_t* size_ret) {
    bump(queries);
    return g_target.clGetPlatformInfo(p, name, size, value, size_ret);
}

cl_int CL_API_CALL device_ids(cl_platform_id p, cl_device_type type, cl_uint n, cl_device_id* out,
                              cl_uint* n_ret) {
    bump(queries);
    return g_target.clGetDeviceIDs(p, type, n, out, n_ret);
}

cl_int CL_API_CALL device_info(cl_device_id d, cl_device_info name, size_t size, void* value,
                               size_t* size_ret) {
    bump(queries);
    return g_target.clGetDeviceInfo(d, name, size, value, size_ret);
}

cl_int CL_API_CALL context_info(cl_context c, cl_context_info name, size_t size, void* value,
                                size_t* size_ret) {
    bump(queries);
    return g_target.clGetContextInfo(c, name, size, value, size_ret);
}

cl_int CL_API_CALL program_info(cl_program p, cl_program_info name, size_t size, void* value,
                                size_t* size_ret) {
    bump(queries);
    return g_target.clGetProgramInfo(p, name, size, value, size_ret);
}

cl_int CL_API_CALL build_info(cl_program p, cl_device_id d, cl_program_build_info name, size_t size,
                              void* value, size_t* size_ret) {
    bump(queries);
    return g_target.clGetProgramBuildInfo(p, d, name, size, value, size_ret);
}

cl_int CL_API_CALL kernel_info(cl_kernel k, cl_kernel_info name, size_t size, void* value,
                               size_t* size_ret) {
    bump(queries);
    return g_target.clGetKernelInfo(k, name, size, value, size_ret);
}

cl_program CL_API_CALL with_binary(cl_context c, cl_uint n, const cl_device_id* devices,
                                   const size_t* lengths, const unsigned char** binaries,
                                   cl_int* status, cl_int* err) {
    bump(programs_made);
    return g_target.clCreateProgramWithBinary(c, n, devices, lengths, binaries, status, err);
}

cl_program CL_API_CALL with_source(cl_context c, cl_uint n, const char** strings,
                                   const size_t* lengths, cl_int* err) {
    bump(programs_made);
    return g_target.clCreateProgramWithSource(c, n, strings, lengths, err);
}

cl_int CL_API_CALL build(cl_program p, cl_uint n, const cl_device_id* devices, const char* options,
                         void(CL_CALLBACK* notify)(cl_program, void*), void* data) {
    bump(builds);
    return g_target.clBuildProgram(p, n, devices, options, notify, data);
}

}  // namespace

extern "C" {
#pragma GCC visibility push(default)

// Copies the first `n` counts (the main thread's queries, programs made and
// builds, then every call of other threads) to `out`.
void kcache_count_layer_read(std::uint64_t* out, std::size_t n) {
    for (std::size_t i = 0; i < n && i < kCounts; ++i) {
        out[i] = g_counts[i].load(std::memory_order_relaxed);
    }
}

#pragma GCC visibility pop
}  // extern "C"

void kcache::test::take_calls(cl_icd_dispatch& layer) {
    layer.clGetPlatformIDs = platform_ids;
    layer.clGetPlatformInfo = platform_info;
    layer.clGetDeviceIDs = device_ids;
    layer.clGetDeviceInfo = device_info;
    layer.clGetContextInfo = context_info;
    layer.clGetProgramInfo = program_info;
    layer.clGetProgramBuildInfo = build_info;
    layer.clGetKernelInfo = kernel_info;
    layer.clCreateProgramWithBinary = with_binary;
    layer.clCreateProgramWithSource = with_source;
    layer.clBuildProgram = build;
}
