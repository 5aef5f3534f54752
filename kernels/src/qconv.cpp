// qconv_pointwise: its registry row, launch geometry and CPU reference.

#include <algorithm>
#include <cmath>
#include <limits>

#include "kcache/kernels/qconv.hpp"
#include "kernel_table.hpp"

namespace kcache::kernels {
namespace {

// The int8 requantization of qconv.cl: round half to even (the default FP
// environment), saturate to int32, add the zero point, clamp to int8.
float requantize(float real, std::int32_t zero_point, Activation act) {
    constexpr double lo = std::numeric_limits<std::int32_t>::min();
    constexpr double hi = std::numeric_limits<std::int32_t>::max();
    const double rounded =
        std::isnan(real) ? 0.0 : std::clamp(std::nearbyint(double{real}), lo, hi);
    std::int64_t q = static_cast<std::int64_t>(rounded) + zero_point;
    if (act == Activation::relu)
        q = std::max<std::int64_t>(q, zero_point);
    return static_cast<float>(std::clamp<std::int64_t>(q, -128, 127));
}

}  // namespace

Int4 qconv_shape_arg(const QconvShape& shape) {
    return {shape.n, shape.c, shape.k, shape.hw};
}

std::size_t qconv_work_items(const QconvShape& shape) {
    return static_cast<std::size_t>(shape.n) * shape.k * shape.hw;
}

std::vector<float> qconv_pointwise_reference(const QconvShape& sh, const QconvInputs& in,
                                             QuantOutput out, Activation act) {
    std::vector<float> y;
    y.reserve(qconv_work_items(sh));
    for (std::int32_t n = 0; n < sh.n; ++n) {
        for (std::int32_t k = 0; k < sh.k; ++k) {
            for (std::int32_t p = 0; p < sh.hw; ++p) {
                std::int32_t acc = in.bias.empty() ? 0 : in.bias[k];
                for (std::int32_t c = 0; c < sh.c; ++c) {
                    const std::size_t xi = (static_cast<std::size_t>(n) * sh.c + c) * sh.hw + p;
                    acc +=
                        (in.x[xi] - in.x_zero_point) * in.w[static_cast<std::size_t>(k) * sh.c + c];
                }
                const float real = static_cast<float>(acc) * in.scale[k];
                if (out == QuantOutput::f32) {
                    y.push_back(act == Activation::relu ? std::max(real, 0.0f) : real);
                } else {
                    y.push_back(requantize(real, in.zero_point[k], act));
                }
            }
        }
    }
    return y;
}

}  // namespace kcache::kernels

namespace kcache::kernels::detail {

KernelInfo qconv_kernel() {
    return {"qconv_pointwise",
            {"qconv2d_pointwise"},
            "qconv.cl",
            {"qconv_pointwise"},
            {{"out", {{"f32", "-DKC_QOUT_F32", {}, ""}, {"i8", "-DKC_QOUT_I8", {}, ""}}},
             activation_param(),
             local_size_param({64})}};
}

}  // namespace kcache::kernels::detail
