// dot: its registry row, launch geometry and CPU reference.

#include <algorithm>
#include <cmath>

#include "kcache/kernels/dot.hpp"
#include "kernel_table.hpp"

namespace kcache::kernels {

std::size_t dot_groups(std::size_t n, std::size_t local_size) {
    // Aim for at least 4 elements per item before adding groups.
    const std::size_t per_group = local_size * 4;
    return std::clamp<std::size_t>((n + per_group - 1) / per_group, 1, kDotMaxGroups);
}

std::vector<RefValue> dot_reference(std::span<const float> x, std::span<const float> y,
                                    std::size_t n, std::size_t batch) {
    std::vector<RefValue> out(batch);
    for (std::size_t b = 0; b < batch; ++b) {
        for (std::size_t i = b * n; i < (b + 1) * n; ++i) {
            const double term = static_cast<double>(x[i]) * y[i];
            out[b].value += term;
            out[b].scale += std::fabs(term);
        }
    }
    return out;
}

}  // namespace kcache::kernels

namespace kcache::kernels::detail {

// arith=f16 forms products in native half: it needs cl_khr_fp16 (PoCL here
// lacks it, so the variant is reported unsupported there).
KernelInfo dot_kernel() {
    return {"dot",
            {},
            "dot.cl",
            {"dot_partial", "dot_finish"},
            {dtype_param(),
             {"arith",
              {{"f32", "-DKC_HALF_ARITH=0", {}, ""},
               {"f16", "-DKC_HALF_ARITH=1", {"cl_khr_fp16"}, "dtype=f16"}}},
             local_size_param({256, 64})}};
}

}  // namespace kcache::kernels::detail
