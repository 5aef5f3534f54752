#pragma once
// RAII owners for OpenCL handles: std::unique_ptr with a release deleter,
// so each owner is move-only and releases exactly once.

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <memory>
#include <type_traits>

namespace kcache::compiler::cl {

template <class H, cl_int (*Release)(H)>
struct Releaser {
    void operator()(H h) const noexcept { Release(h); }
};

using Context =
    std::unique_ptr<std::remove_pointer_t<cl_context>, Releaser<cl_context, clReleaseContext>>;
using Program =
    std::unique_ptr<std::remove_pointer_t<cl_program>, Releaser<cl_program, clReleaseProgram>>;
using Kernel =
    std::unique_ptr<std::remove_pointer_t<cl_kernel>, Releaser<cl_kernel, clReleaseKernel>>;
using Queue = std::unique_ptr<std::remove_pointer_t<cl_command_queue>,
                              Releaser<cl_command_queue, clReleaseCommandQueue>>;
using Mem = std::unique_ptr<std::remove_pointer_t<cl_mem>, Releaser<cl_mem, clReleaseMemObject>>;

}  // namespace kcache::compiler::cl
