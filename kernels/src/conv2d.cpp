// conv2d: its registry row, launch geometry and CPU reference.

#include <cmath>

#include "kcache/kernels/conv2d.hpp"
#include "kernel_table.hpp"

namespace kcache::kernels {
namespace {

std::int32_t out_extent(std::int32_t in, std::int32_t pad, std::int32_t dil, std::int32_t taps,
                        std::int32_t stride) {
    const std::int64_t span = std::int64_t{in} + 2 * pad - std::int64_t{dil} * (taps - 1) - 1;
    return span < 0 ? 0 : static_cast<std::int32_t>(span / stride + 1);
}

RefValue activate(RefValue v, Activation act) {
    if (act == Activation::relu && !(v.value > 0))
        v.value = 0;
    return v;
}

// One output element (n, k, oh, ow) of the convolution, without bias.
RefValue conv_point(const Conv2dShape& sh, std::span<const float> x, std::span<const float> w,
                    std::array<std::int32_t, 4> at) {
    const auto [n, k, oh, ow] = at;
    const std::int32_t cpg = sh.c / sh.groups;
    const std::int32_t c0 = (k / (sh.k / sh.groups)) * cpg;
    RefValue v;
    for (std::int32_t c = 0; c < cpg; ++c) {
        const std::size_t x_plane = (static_cast<std::size_t>(n) * sh.c + c0 + c) * sh.h;
        const std::size_t w_plane = (static_cast<std::size_t>(k) * cpg + c) * sh.r;
        for (std::int32_t r = 0; r < sh.r; ++r) {
            const std::int32_t ih = oh * sh.stride_h - sh.pad_h + r * sh.dil_h;
            if (ih < 0 || ih >= sh.h)
                continue;
            for (std::int32_t s = 0; s < sh.s; ++s) {
                const std::int32_t iw = ow * sh.stride_w - sh.pad_w + s * sh.dil_w;
                if (iw < 0 || iw >= sh.w)
                    continue;
                const double term =
                    double{x[(x_plane + ih) * sh.w + iw]} * w[(w_plane + r) * sh.s + s];
                v.value += term;
                v.scale += std::fabs(term);
            }
        }
    }
    return v;
}

}  // namespace

std::int32_t Conv2dShape::out_h() const {
    return out_extent(h, pad_h, dil_h, r, stride_h);
}
std::int32_t Conv2dShape::out_w() const {
    return out_extent(w, pad_w, dil_w, s, stride_w);
}

std::size_t Conv2dShape::input_elements() const {
    return static_cast<std::size_t>(n) * c * h * w;
}
std::size_t Conv2dShape::weight_elements() const {
    return static_cast<std::size_t>(k) * (c / groups) * r * s;
}
std::size_t Conv2dShape::output_elements() const {
    return static_cast<std::size_t>(n) * k * out_h() * out_w();
}

bool Conv2dShape::valid() const {
    const bool sizes = n >= 0 && c >= 1 && h >= 1 && w >= 1 && k >= 0 && r >= 1 && s >= 1;
    const bool steps =
        stride_h >= 1 && stride_w >= 1 && pad_h >= 0 && pad_w >= 0 && dil_h >= 1 && dil_w >= 1;
    return sizes && steps && groups >= 1 && c % groups == 0 && k % groups == 0;
}

std::array<Int4, 4> conv2d_shape_args(const Conv2dShape& sh) {
    return {Int4{sh.n, sh.c, sh.h, sh.w}, Int4{sh.k, sh.r, sh.s, sh.groups},
            Int4{sh.stride_h, sh.stride_w, sh.pad_h, sh.pad_w},
            Int4{sh.dil_h, sh.dil_w, sh.out_h(), sh.out_w()}};
}

bool conv2d_is_pointwise(const Conv2dShape& sh) {
    return sh.r == 1 && sh.s == 1 && sh.stride_h == 1 && sh.stride_w == 1 && sh.pad_h == 0 &&
           sh.pad_w == 0 && sh.groups == 1;
}

std::string_view conv2d_entry_point(const Conv2dShape& shape) {
    return conv2d_is_pointwise(shape) ? "conv2d_pointwise" : "conv2d_direct";
}

std::size_t conv2d_work_items(const Conv2dShape& sh) {
    const std::size_t pixels = static_cast<std::size_t>(sh.out_h()) * sh.out_w();
    const std::size_t channels =
        conv2d_is_pointwise(sh)
            ? static_cast<std::size_t>(sh.k + kPointwiseBlock - 1) / kPointwiseBlock
            : static_cast<std::size_t>(sh.k);
    return static_cast<std::size_t>(sh.n) * channels * pixels;
}

std::vector<RefValue> conv2d_reference(const Conv2dShape& sh, std::span<const float> x,
                                       std::span<const float> w, std::span<const float> bias,
                                       Activation act) {
    std::vector<RefValue> y;
    y.reserve(sh.output_elements());
    for (std::int32_t n = 0; n < sh.n; ++n) {
        for (std::int32_t k = 0; k < sh.k; ++k) {
            for (std::int32_t oh = 0; oh < sh.out_h(); ++oh) {
                for (std::int32_t ow = 0; ow < sh.out_w(); ++ow) {
                    RefValue v = conv_point(sh, x, w, {n, k, oh, ow});
                    if (!bias.empty()) {
                        v.value += bias[k];
                        v.scale += std::fabs(bias[k]);
                    }
                    y.push_back(activate(v, act));
                }
            }
        }
    }
    return y;
}

}  // namespace kcache::kernels

namespace kcache::kernels::detail {

KernelInfo conv2d_kernel() {
    return {"conv2d",
            {"convolution2d"},
            "conv2d.cl",
            {"conv2d_direct", "conv2d_pointwise"},
            {dtype_param(), activation_param(), local_size_param({64})}};
}

}  // namespace kcache::kernels::detail
