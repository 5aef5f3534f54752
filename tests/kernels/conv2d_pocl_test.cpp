// Known-answer tests for conv2d on PoCL: every dtype over a matrix of shapes
// (odd sizes, stride, padding, dilation, groups, depthwise, 1x1, empty).

#include "cl_harness.hpp"
#include "kcache/cl/launch.hpp"
#include "kcache/kernels/reference.hpp"

namespace kcache::test {
namespace {

using kernels::Activation;
using kernels::Conv2dShape;
using kernels::DType;

struct Case {
    const char* name;
    Conv2dShape shape;
};

// Fields: n c h w  k r s  stride_h stride_w  pad_h pad_w  dil_h dil_w  groups
const Case kCases[] = {
    {"single element", {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1}},
    {"odd 3x3 pad 1", {2, 3, 7, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1}},
    {"stride 2 no pad, 3x2 filter", {1, 5, 9, 11, 3, 3, 2, 2, 2, 0, 0, 1, 1, 1}},
    {"dilation 2 pad 2", {1, 4, 10, 9, 6, 3, 3, 1, 1, 2, 2, 2, 2, 1}},
    {"mixed stride and dilation", {2, 2, 8, 13, 3, 2, 3, 1, 3, 0, 2, 2, 1, 1}},
    {"groups 2 stride 2", {1, 6, 9, 8, 4, 3, 3, 2, 2, 1, 1, 1, 1, 2}},
    {"groups 3, 5x5", {1, 9, 11, 7, 6, 5, 5, 1, 1, 2, 2, 1, 1, 3}},
    {"depthwise", {2, 8, 7, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 8}},
    {"depthwise multiplier 2 stride 2", {1, 4, 10, 10, 8, 3, 3, 2, 2, 1, 1, 1, 1, 4}},
    {"filter larger than input, padded", {1, 2, 2, 3, 2, 5, 5, 1, 1, 2, 2, 1, 1, 1}},
    {"pointwise", {2, 16, 5, 7, 9, 1, 1, 1, 1, 0, 0, 1, 1, 1}},
    {"pointwise one channel out", {1, 5, 3, 3, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1}},
    {"1x1 stride 2 (direct)", {1, 3, 7, 7, 5, 1, 1, 2, 2, 0, 0, 1, 1, 1}},
    {"1x1 grouped (direct)", {1, 4, 3, 5, 6, 1, 1, 1, 1, 0, 0, 1, 1, 2}},
    {"long reduction", {1, 32, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1}},
};

std::string conv_id(DType dtype, Activation act) {
    return "conv2d:dtype=" + std::string(kernels::to_string(dtype)) +
           ",act=" + (act == Activation::relu ? "relu" : "none");
}

// Runs conv2d on `shape`; `y_init` is the output buffer's initial content.
std::vector<std::uint8_t> run_conv(DType dtype, Activation act, const Conv2dShape& shape,
                                   const std::vector<float>& x, const std::vector<float>& w,
                                   const std::vector<float>& bias,
                                   const std::vector<std::uint8_t>& y_init) {
    auto run = KernelsCl::device_run(conv_id(dtype, act));
    cl::Conv2dBuffers b;
    b.x = run->upload(kernels::encode(dtype, x));
    b.w = run->upload(kernels::encode(dtype, w));
    b.bias = bias.empty() ? nullptr : run->upload(kernels::encode(dtype, bias));
    b.y = run->upload(y_init);
    run->launch([&](const cl::LaunchTarget& t) { return cl::launch_conv2d(t, shape, b); });
    auto out = run->read(b.y, y_init.size());
    EXPECT_TRUE(run->ok()) << run->error();
    return out;
}

void check_cases(DType dtype) {
    std::uint32_t seed = 10;
    for (const Case& c : kCases) {
        const Conv2dShape& sh = c.shape;
        ASSERT_TRUE(sh.valid()) << c.name;
        const auto x = random_values(dtype, std::size_t(sh.n) * sh.c * sh.h * sh.w, ++seed);
        const auto w =
            random_values(dtype, std::size_t(sh.k) * (sh.c / sh.groups) * sh.r * sh.s, ++seed);
        for (Activation act : {Activation::none, Activation::relu}) {
            // Bias with ReLU, none without: both paths of each flag are covered.
            const auto bias =
                act == Activation::relu ? random_values(dtype, sh.k, ++seed) : std::vector<float>{};
            const std::size_t count = std::size_t(sh.n) * sh.k * sh.out_h() * sh.out_w();
            const auto bytes =
                run_conv(dtype, act, sh, x, w, bias,
                         std::vector<std::uint8_t>(count * kernels::element_size(dtype)));
            expect_close(dtype, kernels::decode(dtype, bytes),
                         kernels::conv2d_reference(sh, x, w, bias, act),
                         std::string(c.name) + (act == Activation::relu ? " +bias relu" : ""));
        }
    }
}

class Conv2d : public KernelsClByDType {};

TEST_P(Conv2d, Shapes) {
    check_cases(GetParam());
}
INSTANTIATE_TEST_SUITE_P(KernelsCl, Conv2d, ::testing::ValuesIn(kAllDTypes), dtype_name);

// Empty outputs (no images, no filters, filter not fitting): a launch of one
// padding work-group must leave the output buffer untouched.
TEST_F(KernelsCl, Conv2dEmptyWritesNothing) {
    const Conv2dShape empties[] = {
        {0, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1},  // N = 0
        {2, 3, 5, 5, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1},  // K = 0
        {1, 2, 2, 2, 3, 3, 3, 1, 1, 0, 0, 1, 1, 1},  // 3x3 filter on 2x2, no pad: OH = 0
        {0, 8, 4, 4, 4, 1, 1, 1, 1, 0, 0, 1, 1, 1},  // pointwise, N = 0
    };
    for (const Conv2dShape& sh : empties) {
        ASSERT_TRUE(sh.valid());
        EXPECT_EQ(std::size_t(sh.n) * sh.k * sh.out_h() * sh.out_w(), 0u);
        const std::vector<std::uint8_t> sentinel(64, 0xab);
        const auto x = random_values(DType::f32, std::size_t(sh.n) * sh.c * sh.h * sh.w, 3);
        const auto w = random_values(DType::f32, std::size_t(sh.k) * sh.c * sh.r * sh.s, 4);
        EXPECT_EQ(run_conv(DType::f32, Activation::none, sh, x, w, {}, sentinel), sentinel);
    }
}

}  // namespace
}  // namespace kcache::test
