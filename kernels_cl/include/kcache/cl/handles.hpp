#pragma once
// Owners of OpenCL handles: std::unique_ptr with a deleter that drops the one
// reference the owner holds, so each owner is move-only and releases exactly
// once. Every part of kcache (and an operator library using it) owns its
// OpenCL objects through these types.

#include "kcache/cl/opencl.hpp"

#include <memory>
#include <type_traits>

namespace kcache::cl {

// Calls `Release` on a handle; the release's status is ignored (a deleter must not fail).
template <class H, cl_int (*Release)(H)>
struct Releaser {
    void operator()(H handle) const noexcept { (void)Release(handle); }
};

// A move-only owner of one reference to an OpenCL object of type `H`.
template <class H, cl_int (*Release)(H)>
using Handle = std::unique_ptr<std::remove_pointer_t<H>, Releaser<H, Release>>;

using ContextHandle = Handle<cl_context, clReleaseContext>;
using QueueHandle = Handle<cl_command_queue, clReleaseCommandQueue>;
using ProgramHandle = Handle<cl_program, clReleaseProgram>;
using KernelHandle = Handle<cl_kernel, clReleaseKernel>;
using MemHandle = Handle<cl_mem, clReleaseMemObject>;
using EventHandle = Handle<cl_event, clReleaseEvent>;

}  // namespace kcache::cl
