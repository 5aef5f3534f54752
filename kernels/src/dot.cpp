// CPU reference and launch geometry for dot.

#include <algorithm>
#include <cmath>

#include "kcache/kernels/launch.hpp"
#include "kcache/kernels/reference.hpp"

namespace kcache::kernels {

std::size_t dot_groups(std::size_t n, std::size_t local_size) {
    // Aim for at least 4 elements per item before adding groups.
    const std::size_t per_group = local_size * 4;
    return std::clamp<std::size_t>((n + per_group - 1) / per_group, 1, kDotMaxGroups);
}

std::size_t padded_global_size(std::size_t count, std::size_t local_size) {
    const std::size_t groups = std::max<std::size_t>(1, (count + local_size - 1) / local_size);
    return groups * local_size;
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
