#pragma once
// conv2d (kernels/cl/conv2d.cl): its shape, launch geometry and CPU reference.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kcache/kernels/numeric.hpp"
#include "kcache/kernels/types.hpp"

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::kernels {

// Shape of an NCHW convolution: input N×C×H×W, K filters of (C/groups)×R×S.
struct Conv2dShape {
    std::int32_t n = 1, c = 1, h = 1, w = 1;
    std::int32_t k = 1, r = 1, s = 1;
    std::int32_t stride_h = 1, stride_w = 1;
    std::int32_t pad_h = 0, pad_w = 0;  // on both sides
    std::int32_t dil_h = 1, dil_w = 1;
    std::int32_t groups = 1;

    // Output height and width (0 when the dilated filter does not fit).
    std::int32_t out_h() const;
    std::int32_t out_w() const;
    // Element counts of x [N][C][H][W], w [K][C/groups][R][S] and y [N][K][OH][OW]
    // (the shape must be valid()).
    std::size_t input_elements() const;
    std::size_t weight_elements() const;
    std::size_t output_elements() const;
    // True when every field is in range and groups divide C and K.
    bool valid() const;
};

// The four int4 arguments (in, filter, step, dil_out) of conv2d_direct and
// conv2d_pointwise, in order.
std::array<Int4, 4> conv2d_shape_args(const Conv2dShape& shape);

// Output channels one conv2d_pointwise item computes.
inline constexpr std::int32_t kPointwiseBlock = 4;

// Returns true when `shape` may (and should) run on the 1×1 fast path.
bool conv2d_is_pointwise(const Conv2dShape& shape);

// Returns the entry point for `shape`: "conv2d_pointwise" or "conv2d_direct".
std::string_view conv2d_entry_point(const Conv2dShape& shape);

// Returns the number of work-items the chosen entry point needs (before padding).
std::size_t conv2d_work_items(const Conv2dShape& shape);

// Returns y[N][K][OH][OW] of the convolution of x[N][C][H][W] with w[K][C/groups][R][S],
// plus `bias` [K] when it is not empty, then `act`. `shape` must be valid().
std::vector<RefValue> conv2d_reference(const Conv2dShape& shape, std::span<const float> x,
                                       std::span<const float> w, std::span<const float> bias,
                                       Activation act);

}  // namespace kcache::kernels

#pragma GCC visibility pop
