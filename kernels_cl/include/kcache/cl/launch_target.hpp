#pragma once
// What every typed launcher takes and returns. A launcher (one per registry
// kernel, in kcache/cl/<file>.hpp after its kernels/cl/<file>.cl) takes a
// shape and the buffers, and returns the event of its last launch or the
// OpenCL failure. Each picks the entry point, the global and local work sizes
// and packs the arguments exactly as the kernel's source declares them, so an
// operator library needs to know nothing of the argument layout of a program
// kcache gave it.
//
// Buffers hold elements in the variant's device layout (kernels::encode);
// per-channel batchnorm parameters and statistics are f32 whatever the dtype.
// The kernels bound-check their index, so empty tensors are fine: a launcher
// with nothing to do enqueues a marker and returns its event.
//
// Every failure is a returned LaunchError (CL_INVALID_WORK_GROUP_SIZE for a
// target without a local size, CL_INVALID_VALUE for a shape out of range);
// the functions throw nothing but std::bad_alloc (from building a message).

#include <cstddef>
#include <span>
#include <string>

#include "kcache/cl/handles.hpp"
#include "kcache/common/result.hpp"

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::cl {

// An OpenCL call of a launch that failed, e.g. code CL_INVALID_KERNEL_NAME with
// message "clCreateKernel(conv2d_direct): CL_INVALID_KERNEL_NAME (-46)".
struct LaunchError {
    cl_int code = CL_SUCCESS;
    std::string message;
};

// The event of a launcher's last command (complete when all of its commands
// are), or why a step failed.
using Launched = Result<EventHandle, LaunchError>;

// Where a launcher enqueues: the queue, the program kcache built for the
// variant, the local size the variant is built with (variant_local_size in
// kcache/cl/launch.hpp), and events its first command waits for (the
// launcher chains its own commands, so in-order and out-of-order queues both
// work).
struct LaunchTarget {
    cl_command_queue queue = nullptr;
    cl_program program = nullptr;
    std::size_t local_size = 0;
    std::span<const cl_event> wait = {};
};

}  // namespace kcache::cl

#pragma GCC visibility pop
