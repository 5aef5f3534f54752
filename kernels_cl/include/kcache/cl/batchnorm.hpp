#pragma once
// The launchers of batchnorm (kernels/cl/batchnorm.cl): inference with given
// statistics, the batch statistics, and the training forward (both).

#include "kcache/cl/launch_target.hpp"
#include "kcache/kernels/batchnorm.hpp"

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::cl {

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

#pragma GCC visibility pop
