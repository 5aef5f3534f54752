// Every op × dtype on the device (PoCL, programs from kcache) and on the CPU
// path, against the kernels' CPU references within their documented tolerances.

#include <gtest/gtest.h>

#include "ops_fixture.hpp"

namespace ops::test {
namespace {

std::string name(const char* op, DType dtype, std::size_t i) {
    return std::string(op) + " " + std::string(kk::to_string(dtype)) + " case " + std::to_string(i);
}

void expect_path(const Path& path, Backend want, const std::string& what) {
    EXPECT_EQ(path.backend, want) << what << ": " << path.describe();
}

const Conv2dShape kConvShapes[] = {
    {.n = 1, .c = 3, .h = 9, .w = 7, .k = 4, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1},
    {.n = 2, .c = 8, .h = 5, .w = 6, .k = 6},  // 1x1: the pointwise entry point, a partial block
    {.n = 1,
     .c = 4,
     .h = 11,
     .w = 10,
     .k = 4,
     .r = 3,
     .s = 2,
     .stride_h = 2,
     .pad_h = 1,
     .dil_h = 2,
     .groups = 2},
    {.n = 1,
     .c = 3,
     .h = 5,
     .w = 5,
     .k = 3,
     .r = 3,
     .s = 3,
     .pad_h = 1,
     .pad_w = 1,
     .groups = 3},                                             // depthwise
    {.n = 0, .c = 2, .h = 4, .w = 4, .k = 2, .r = 3, .s = 3},  // an empty batch
};

void check_conv2d(Context& ctx, DType dtype, Activation act, Backend want) {
    std::uint32_t seed = 10;
    for (std::size_t i = 0; i < std::size(kConvShapes); ++i) {
        const Conv2dShape& s = kConvShapes[i];
        const auto x = random_values(std::size_t(s.n) * s.c * s.h * s.w, ++seed);
        const auto w = random_values(std::size_t(s.k) * (s.c / s.groups) * s.r * s.s, ++seed);
        const auto bias = i % 2 == 0 ? random_values(s.k, ++seed) : std::vector<float>{};
        auto out = conv2d(ctx, s, x, w, bias, act, dtype);
        ASSERT_TRUE(out) << out.error().message;
        expect_path(out->path, want, name("conv2d", dtype, i));
        expect_within(kk::tolerance(dtype), out->values,
                      kk::conv2d_reference(s, rounded(dtype, x), rounded(dtype, w),
                                           rounded(dtype, bias), act),
                      name("conv2d", dtype, i));
    }
}

struct DotCase {
    std::size_t n, batch;
};
const DotCase kDotCases[] = {{1000, 3}, {0, 2}, {1, 1}, {70000, 1}, {5, 0}};

void check_dot(Context& ctx, DType dtype, Backend want) {
    std::uint32_t seed = 20;
    for (std::size_t i = 0; i < std::size(kDotCases); ++i) {
        const auto [n, batch] = kDotCases[i];
        const auto x = random_values(n * batch, ++seed), y = random_values(n * batch, ++seed);
        auto out = dot(ctx, x, y, n, batch, dtype);
        ASSERT_TRUE(out) << out.error().message;
        expect_path(out->path, want, name("dot", dtype, i));
        expect_within(kk::tolerance(dtype), out->values,
                      kk::dot_reference(rounded(dtype, x), rounded(dtype, y), n, batch),
                      name("dot", dtype, i));
    }
}

const BatchnormShape kBnShapes[] = {{2, 3, 35}, {1, 5, 1000}, {0, 4, 9}, {3, 2, 333}};

void check_batchnorm_inference(Context& ctx, DType dtype, Activation act, Backend want) {
    std::uint32_t seed = 30;
    for (std::size_t i = 0; i < std::size(kBnShapes); ++i) {
        const BatchnormShape& s = kBnShapes[i];
        const auto x = random_values(kk::batchnorm_work_items(s), ++seed, -3, 3);
        const auto mean = random_values(s.c, ++seed), var = random_values(s.c, ++seed, 0, 4);
        const auto gamma = random_values(s.c, ++seed, 0.5f, 2), beta = random_values(s.c, ++seed);
        const BatchnormParams params{mean, var, gamma, beta, 1e-5f};
        auto out = batchnorm_inference(ctx, s, x, params, act, dtype);
        ASSERT_TRUE(out) << out.error().message;
        expect_path(out->path, want, name("batchnorm_inference", dtype, i));
        expect_within(kk::tolerance(dtype), out->values,
                      kk::batchnorm_inference_reference(s, rounded(dtype, x), params, act),
                      name("batchnorm_inference", dtype, i));
    }
}

// At offset 100 a sum-of-squares variance would cancel; the statistics must not.
void check_batchnorm_training(Context& ctx, DType dtype, Activation act, Backend want) {
    std::uint32_t seed = 40;
    for (float offset : {0.0f, 100.0f}) {
        for (std::size_t i = 0; i < std::size(kBnShapes); ++i) {
            const BatchnormShape& s = kBnShapes[i];
            const std::string what = name("batchnorm_training", dtype, i) + " offset " +
                                     std::to_string(static_cast<int>(offset));
            const auto x =
                random_values(kk::batchnorm_work_items(s), ++seed, offset - 1, offset + 1);
            const auto gamma = random_values(s.c, ++seed, 0.5f, 2);
            const auto beta = random_values(s.c, ++seed);
            auto out = batchnorm_training(ctx, s, x, gamma, beta, 1e-5f, act, dtype);
            ASSERT_TRUE(out) << out.error().message;
            expect_path(out->path, want, what);
            const auto ref =
                kk::batchnorm_training_reference(s, rounded(dtype, x), gamma, beta, 1e-5f, act);
            expect_within(kk::tolerance(DType::f32), out->mean, ref.mean, what + " mean");
            expect_within(kk::tolerance(DType::f32), out->var, ref.var, what + " var");
            expect_within(kk::tolerance(dtype), out->values, ref.y, what + " y");
        }
    }
}

// One kcache compile per test (each test runs in its own process with its own store).
TEST_F(Ops, Conv2dF32OnDevice) {
    Context ctx = device_context();
    check_conv2d(ctx, DType::f32, Activation::none, Backend::device);
}
TEST_F(Ops, Conv2dF16OnDevice) {
    Context ctx = device_context();
    check_conv2d(ctx, DType::f16, Activation::none, Backend::device);
}
TEST_F(Ops, Conv2dBf16ReluOnDevice) {
    Context ctx = device_context();
    check_conv2d(ctx, DType::bf16, Activation::relu, Backend::device);
}
TEST_F(Ops, DotF32OnDevice) {
    Context ctx = device_context();
    check_dot(ctx, DType::f32, Backend::device);
}
TEST_F(Ops, DotF16OnDevice) {
    Context ctx = device_context();
    check_dot(ctx, DType::f16, Backend::device);
}
TEST_F(Ops, DotBf16OnDevice) {
    Context ctx = device_context();
    check_dot(ctx, DType::bf16, Backend::device);
}
// Inference and training share one program per dtype and activation.
TEST_F(Ops, BatchnormF32OnDevice) {
    Context ctx = device_context();
    check_batchnorm_inference(ctx, DType::f32, Activation::none, Backend::device);
    check_batchnorm_training(ctx, DType::f32, Activation::none, Backend::device);
}
TEST_F(Ops, BatchnormF16ReluOnDevice) {
    Context ctx = device_context();
    check_batchnorm_inference(ctx, DType::f16, Activation::relu, Backend::device);
    check_batchnorm_training(ctx, DType::f16, Activation::relu, Backend::device);
}
TEST_F(Ops, BatchnormBf16OnDevice) {
    Context ctx = device_context();
    check_batchnorm_inference(ctx, DType::bf16, Activation::none, Backend::device);
    check_batchnorm_training(ctx, DType::bf16, Activation::none, Backend::device);
}

// The CPU path gives the same answers for every op, dtype and activation.
TEST_F(Ops, CpuPathMatchesReferences) {
    Context ctx = Context::create({.device = DevicePolicy::cpu_only});
    for (DType dtype : kAllDTypes) {
        for (Activation act : {Activation::none, Activation::relu}) {
            check_conv2d(ctx, dtype, act, Backend::cpu);
            check_batchnorm_inference(ctx, dtype, act, Backend::cpu);
            check_batchnorm_training(ctx, dtype, act, Backend::cpu);
        }
        check_dot(ctx, dtype, Backend::cpu);
    }
}

}  // namespace
}  // namespace ops::test
