#pragma once
// batchnorm (kernels/cl/batchnorm.cl): its shape, launch geometry and CPU
// references (inference and training forward).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kcache/kernels/numeric.hpp"
#include "kcache/kernels/types.hpp"

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::kernels {

// Shape of a batchnorm: N×C×HW, normalised per channel.
struct BatchnormShape {
    std::int32_t n = 1, c = 1, hw = 1;
};

// The int4 `shape` argument of batchnorm_inference and batchnorm_stats.
Int4 batchnorm_shape_arg(const BatchnormShape& shape);

// Returns the number of work-items batchnorm_inference needs (before padding);
// batchnorm_stats needs C work-groups of its local size.
std::size_t batchnorm_work_items(const BatchnormShape& shape);

// Per-channel parameters of batchnorm, all [C] and f32 whatever the element type.
struct BatchnormParams {
    std::span<const float> mean, var, gamma, beta;
    float eps = 1e-5f;
};

// Returns y = act((x - mean) * gamma / sqrt(var + eps) + beta) per channel.
std::vector<RefValue> batchnorm_inference_reference(const BatchnormShape& shape,
                                                    std::span<const float> x,
                                                    const BatchnormParams& params, Activation act);

// Training forward: the batch statistics (biased variance; 0 and 0 for an empty
// channel) and the output normalised with them.
struct BatchnormTrainingRef {
    std::vector<RefValue> mean, var, y;
};

// Returns the training forward of `x` with `gamma`, `beta`, `eps` and `act`.
// The tolerance scales carry the statistics' own error into y.
BatchnormTrainingRef batchnorm_training_reference(const BatchnormShape& shape,
                                                  std::span<const float> x,
                                                  std::span<const float> gamma,
                                                  std::span<const float> beta, float eps,
                                                  Activation act);

}  // namespace kcache::kernels

#pragma GCC visibility pop
