#pragma once
// qconv_pointwise (kernels/cl/qconv.cl): its shape, launch geometry and CPU
// reference.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kcache/kernels/types.hpp"

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::kernels {

// Shape of a quantized 1×1 convolution: input N×C×HW, K output channels.
struct QconvShape {
    std::int32_t n = 1, c = 1, k = 1, hw = 1;
};

// The int4 `shape` argument of qconv_pointwise.
Int4 qconv_shape_arg(const QconvShape& shape);

// Returns the number of work-items qconv_pointwise needs (before padding).
std::size_t qconv_work_items(const QconvShape& shape);

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

#pragma GCC visibility pop
