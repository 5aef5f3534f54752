#pragma once
// Typed launchers, one per registry kernel: a shape and the buffers in, the
// event of the last launch (or the OpenCL failure) out. Each picks the entry
// point, the global and local work sizes and packs the arguments exactly as
// the kernel's source declares them, so an operator library needs to know
// nothing of the argument layout of a program kcache gave it.
//
// Buffers hold elements in the variant's device layout (kernels::encode);
// per-channel batchnorm parameters and statistics are f32 whatever the dtype.
// The kernels bound-check their index, so empty tensors are fine: a launcher
// with nothing to do enqueues a marker and returns its event.
//
// Every failure is a returned LaunchError; the functions throw nothing but
// std::bad_alloc (from building a message).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "kcache/cl/handles.hpp"
#include "kcache/common/result.hpp"
#include "kcache/kernels/launch.hpp"
#include "kcache/kernels/registry.hpp"

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
// variant, the local size the variant is built with (variant_local_size), and
// events its first command waits for (the launcher chains its own commands,
// so in-order and out-of-order queues both work).
struct LaunchTarget {
    cl_command_queue queue = nullptr;
    cl_program program = nullptr;
    std::size_t local_size = 0;
    std::span<const cl_event> wait = {};
};

// Returns the work-group size `variant` is built with (its kernels require
// exactly that local size); the registry's error for a variant it did not make.
Result<std::size_t, kernels::KernelError> variant_local_size(const kernels::Variant& variant);

// dot: rows of `n` elements of x and y, `rows` results in out. `partial`
// holds dot_partial_bytes(n, rows, local_size) bytes of scratch.
struct DotBuffers {
    cl_mem x = nullptr, y = nullptr, partial = nullptr, out = nullptr;
};
// Returns the size in bytes of dot's scratch buffer (at least 1).
std::size_t dot_partial_bytes(std::size_t n, std::size_t rows, std::size_t local_size) noexcept;
// Enqueues dot_partial then dot_finish; an error when n or rows exceeds 32 bits.
Launched launch_dot(const LaunchTarget& target, std::size_t n, std::size_t rows,
                    const DotBuffers& buffers);

// conv2d: x [N][C][H][W], w [K][C/groups][R][S], bias [K] (nullptr: none), y [N][K][OH][OW].
struct Conv2dBuffers {
    cl_mem x = nullptr, w = nullptr, bias = nullptr, y = nullptr;
};
// Enqueues conv2d_pointwise when kernels::conv2d_is_pointwise(shape), else
// conv2d_direct; CL_INVALID_VALUE when `shape` is not valid().
Launched launch_conv2d(const LaunchTarget& target, const kernels::Conv2dShape& shape,
                       const Conv2dBuffers& buffers);

// qconv_pointwise: int8 x [N][C][HW] and w [K][C]; int32 bias [K] (nullptr:
// none); f32 scale [K]; int32 zero_point [K]; y [N][K][HW] as f32 or int8 per variant.
struct QconvBuffers {
    cl_mem x = nullptr, w = nullptr, bias = nullptr, scale = nullptr, zero_point = nullptr,
           y = nullptr;
    std::int32_t x_zero_point = 0;
};
// Enqueues qconv_pointwise; CL_INVALID_VALUE for a negative dimension.
Launched launch_qconv_pointwise(const LaunchTarget& target, const kernels::QconvShape& shape,
                                const QconvBuffers& buffers);

// batchnorm: x and y [N][C][HW]; mean, var, gamma, beta [C] (f32).
struct BatchnormBuffers {
    cl_mem x = nullptr, mean = nullptr, var = nullptr, gamma = nullptr, beta = nullptr, y = nullptr;
    float eps = 1e-5f;
};
// Enqueues batchnorm_inference with the given statistics; CL_INVALID_VALUE for
// a negative dimension.
Launched launch_batchnorm_inference(const LaunchTarget& target,
                                    const kernels::BatchnormShape& shape,
                                    const BatchnormBuffers& buffers);
// Enqueues batchnorm_stats, writing the batch mean and biased variance of x
// into buffers.mean and buffers.var; CL_INVALID_VALUE for a negative dimension.
Launched launch_batchnorm_stats(const LaunchTarget& target, const kernels::BatchnormShape& shape,
                                const BatchnormBuffers& buffers);
// The training forward: batchnorm_stats into buffers.mean / buffers.var, then
// batchnorm_inference with them.
Launched launch_batchnorm_training(const LaunchTarget& target, const kernels::BatchnormShape& shape,
                                   const BatchnormBuffers& buffers);

}  // namespace kcache::cl
