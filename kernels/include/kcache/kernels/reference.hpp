#pragma once
// CPU references for every kernel and variant. Inputs are the element values
// as floats (already representable in the variant's element type, see
// round_to); results are computed in double and come with the magnitude of
// their terms so that tolerance() can judge a device result (numeric.hpp).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kcache/kernels/launch.hpp"
#include "kcache/kernels/numeric.hpp"
#include "kcache/kernels/registry.hpp"

namespace kcache::kernels {

// Returns the tolerance results of `variant` are checked with: tolerance(dtype),
// widened for dot's native-half products (each rounded to half, 2^-11 relative),
// and all zero for the bit-exact qconv_pointwise; the errors of render otherwise.
Result<Tolerance, KernelError> variant_tolerance(const Variant& variant);

// Fused activation of a variant ("act" parameter).
enum class Activation { none, relu };

// Returns the `batch` dot products of rows of length `n` of `x` and `y` (row-major).
std::vector<RefValue> dot_reference(std::span<const float> x, std::span<const float> y,
                                    std::size_t n, std::size_t batch);

// Returns y[N][K][OH][OW] of the convolution of x[N][C][H][W] with w[K][C/groups][R][S],
// plus `bias` [K] when it is not empty, then `act`. `shape` must be valid().
std::vector<RefValue> conv2d_reference(const Conv2dShape& shape, std::span<const float> x,
                                       std::span<const float> w, std::span<const float> bias,
                                       Activation act);

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

// Output of qconv_pointwise ("out" parameter).
enum class QuantOutput { f32, i8 };

// The tensors of a quantized pointwise convolution (see kernels/cl/qconv.cl).
struct QconvInputs {
    std::span<const std::int8_t> x;            // [N][C][HW]
    std::span<const std::int8_t> w;            // [K][C]
    std::span<const std::int32_t> bias;        // [K], or empty for none
    std::span<const float> scale;              // [K]
    std::span<const std::int32_t> zero_point;  // [K], the int8 output's zero point
    std::int32_t x_zero_point = 0;
};

// Returns y[N][K][HW] exactly as qconv_pointwise computes it (int8 results as
// floats): the quantized kernels have no tolerance, results are bit-exact.
std::vector<float> qconv_pointwise_reference(const QconvShape& shape, const QconvInputs& in,
                                             QuantOutput out, Activation act);

}  // namespace kcache::kernels
