#pragma once
// Launch geometry the kernels expect (their argument lists are documented at
// the top of each kernels/cl/*.cl file and in kernels/README.md).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::kernels {

// Most work-groups dot_partial uses per row; more adds little but pass-2 work.
inline constexpr std::size_t kDotMaxGroups = 256;

// Returns the number of work-groups per row for dot_partial: enough to give each
// item a few elements, at least 1 (so n == 0 still yields a 0 result).
std::size_t dot_groups(std::size_t n, std::size_t local_size);

// Returns `count` rounded up to a multiple of `local_size`, at least one group
// (kernels bound-check their index, so the padding items do nothing).
std::size_t padded_global_size(std::size_t count, std::size_t local_size);

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
// conv2d_pointwise, in order; each is 16 bytes, the layout of an OpenCL int4.
using Int4 = std::array<std::int32_t, 4>;
std::array<Int4, 4> conv2d_shape_args(const Conv2dShape& shape);

// Output channels one conv2d_pointwise item computes.
inline constexpr std::int32_t kPointwiseBlock = 4;

// Returns true when `shape` may (and should) run on the 1×1 fast path.
bool conv2d_is_pointwise(const Conv2dShape& shape);

// Returns the entry point for `shape`: "conv2d_pointwise" or "conv2d_direct".
std::string_view conv2d_entry_point(const Conv2dShape& shape);

// Returns the number of work-items the chosen entry point needs (before padding).
std::size_t conv2d_work_items(const Conv2dShape& shape);

// Shape of a quantized 1×1 convolution: input N×C×HW, K output channels.
struct QconvShape {
    std::int32_t n = 1, c = 1, k = 1, hw = 1;
};

// The int4 `shape` argument of qconv_pointwise.
Int4 qconv_shape_arg(const QconvShape& shape);

// Returns the number of work-items qconv_pointwise needs (before padding).
std::size_t qconv_work_items(const QconvShape& shape);

// Shape of a batchnorm: N×C×HW, normalised per channel.
struct BatchnormShape {
    std::int32_t n = 1, c = 1, hw = 1;
};

// The int4 `shape` argument of batchnorm_inference and batchnorm_stats.
Int4 batchnorm_shape_arg(const BatchnormShape& shape);

// Returns the number of work-items batchnorm_inference needs (before padding);
// batchnorm_stats needs C work-groups of its local size.
std::size_t batchnorm_work_items(const BatchnormShape& shape);

}  // namespace kcache::kernels

#pragma GCC visibility pop
