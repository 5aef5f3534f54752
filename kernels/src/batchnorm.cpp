// batchnorm: its registry row, launch geometry and CPU references (inference
// and training forward).

#include <cmath>

#include "kcache/kernels/batchnorm.hpp"
#include "kernel_table.hpp"

namespace kcache::kernels {
namespace {

std::size_t index_of(const BatchnormShape& sh, std::int32_t n, std::int32_t c, std::int32_t p) {
    return (static_cast<std::size_t>(n) * sh.c + c) * sh.hw + p;
}

// One channel's normalisation in double: `mean_scale` is the magnitude the mean
// was computed from, `var_rel` how much of var + eps carries var's own error.
struct ChannelNorm {
    double mean, var, gamma, beta, eps, mean_scale, var_rel;
};

// Normalises channel `c` of `x` into `y` (which holds N*C*HW entries).
void normalise_channel(const BatchnormShape& sh, std::span<const float> x, std::int32_t c,
                       const ChannelNorm& cn, Activation act, std::vector<RefValue>& y) {
    const auto [mean, var, gamma, beta, eps, mean_scale, var_rel] = cn;
    const double scale = gamma / std::sqrt(var + eps);
    for (std::int32_t n = 0; n < sh.n; ++n) {
        for (std::int32_t p = 0; p < sh.hw; ++p) {
            const std::size_t i = index_of(sh, n, c, p);
            const double centred = x[i] - mean;
            RefValue v{centred * scale + beta, (std::fabs(x[i]) + mean_scale) * std::fabs(scale) +
                                                   std::fabs(beta) +
                                                   std::fabs(centred * scale) * var_rel};
            if (act == Activation::relu && !(v.value > 0))
                v.value = 0;
            y[i] = v;
        }
    }
}

}  // namespace

Int4 batchnorm_shape_arg(const BatchnormShape& shape) {
    return {shape.n, shape.c, shape.hw, 0};
}

std::size_t batchnorm_work_items(const BatchnormShape& shape) {
    return static_cast<std::size_t>(shape.n) * shape.c * shape.hw;
}

std::vector<RefValue> batchnorm_inference_reference(const BatchnormShape& sh,
                                                    std::span<const float> x,
                                                    const BatchnormParams& p, Activation act) {
    std::vector<RefValue> y(batchnorm_work_items(sh));
    for (std::int32_t c = 0; c < sh.c; ++c) {
        const ChannelNorm cn{
            p.mean[c], p.var[c], p.gamma[c], p.beta[c], p.eps, std::fabs(p.mean[c]), 0.0};
        normalise_channel(sh, x, c, cn, act, y);
    }
    return y;
}

BatchnormTrainingRef batchnorm_training_reference(const BatchnormShape& sh,
                                                  std::span<const float> x,
                                                  std::span<const float> gamma,
                                                  std::span<const float> beta, float eps,
                                                  Activation act) {
    BatchnormTrainingRef out{std::vector<RefValue>(sh.c), std::vector<RefValue>(sh.c),
                             std::vector<RefValue>(batchnorm_work_items(sh))};
    const double count = static_cast<double>(sh.n) * sh.hw;
    for (std::int32_t c = 0; c < sh.c; ++c) {
        double sum = 0, abs_sum = 0, sq = 0;  // two passes in double
        for (std::int32_t n = 0; n < sh.n; ++n) {
            for (std::int32_t p = 0; p < sh.hw; ++p) {
                sum += x[index_of(sh, n, c, p)];
                abs_sum += std::fabs(x[index_of(sh, n, c, p)]);
            }
        }
        const double mean = count > 0 ? sum / count : 0;
        for (std::int32_t n = 0; n < sh.n; ++n) {
            for (std::int32_t p = 0; p < sh.hw; ++p) {
                const double d = x[index_of(sh, n, c, p)] - mean;
                sq += d * d;
            }
        }
        const double var = count > 0 ? sq / count : 0;
        const double mean_scale = count > 0 ? abs_sum / count : 0;
        // A stable reduction errs relative to the spread (var), not to the mean.
        out.mean[c] = {mean, mean_scale};
        out.var[c] = {var, var};
        // var's tolerance, relative to var + eps, bounds the error of 1/sqrt(var + eps).
        const double var_rel = var / (var + eps);
        normalise_channel(sh, x, c, {mean, var, gamma[c], beta[c], eps, mean_scale, var_rel}, act,
                          out.y);
    }
    return out;
}

}  // namespace kcache::kernels

namespace kcache::kernels::detail {

KernelInfo batchnorm_kernel() {
    return {"batchnorm",
            {"batch_norm"},
            "batchnorm.cl",
            {"batchnorm_inference", "batchnorm_stats"},
            {dtype_param(), activation_param(), local_size_param({256})}};
}

}  // namespace kcache::kernels::detail
