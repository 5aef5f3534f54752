#pragma once
// Owners of the OpenCL handles the ops library creates: move-only, released once.

#include <CL/cl.h>

#include <memory>
#include <type_traits>

namespace ops::detail {

template <class T, cl_int (*Release)(T)>
struct ClRelease {
    void operator()(T handle) const { (void)Release(handle); }
};

template <class T, cl_int (*Release)(T)>
using ClHandle = std::unique_ptr<std::remove_pointer_t<T>, ClRelease<T, Release>>;

using ContextHandle = ClHandle<cl_context, clReleaseContext>;
using QueueHandle = ClHandle<cl_command_queue, clReleaseCommandQueue>;
using KernelHandle = ClHandle<cl_kernel, clReleaseKernel>;
using BufferHandle = ClHandle<cl_mem, clReleaseMemObject>;

}  // namespace ops::detail
