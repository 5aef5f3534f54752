// Which path each call takes, as the ops report it: kcache's rungs when the
// device runs, and the CPU fallback with kcache's reason when it cannot.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <thread>

#include "ops_fixture.hpp"

namespace ops::test {
namespace {

using kcache::Rung;
using kcache::StatusCode;
using std::chrono::milliseconds;

constexpr std::size_t kN = 4096, kBatch = 2;

struct DotData {
    std::vector<float> x = random_values(kN * kBatch, 1), y = random_values(kN * kBatch, 2);

    // Runs the op and checks its values against the reference; returns its path.
    Path run(Context& ctx, DType dtype, DotArith arith = DotArith::f32) const {
        auto out = dot(ctx, x, y, kN, kBatch, dtype, arith);
        EXPECT_TRUE(out) << out.error().message;
        if (!out) {
            return {};
        }
        auto variant = kk::make_variant("dot", {{"dtype", std::string(kk::to_string(dtype))},
                                                {"arith", arith == DotArith::f16 ? "f16" : "f32"}});
        EXPECT_TRUE(variant);
        expect_within(*kk::variant_tolerance(*variant), out->values,
                      kk::dot_reference(rounded(dtype, x), rounded(dtype, y), kN, kBatch),
                      "dot " + out->path.describe());
        return out->path;
    }
};

// Expects `path` to have run on the device, with the program from `rung`.
void expect_device(const Path& path, Rung rung) {
    EXPECT_EQ(path.backend, Backend::device) << path.describe();
    EXPECT_EQ(path.rung, rung) << path.describe();
}

// Expects `path` to have run on the CPU because kcache answered `status`.
void expect_cpu(const Path& path, StatusCode status) {
    EXPECT_EQ(path.backend, Backend::cpu) << path.describe();
    EXPECT_EQ(path.status, status) << path.describe();
}

TEST_F(Ops, SecondContextHitsTheUserStore) {
    DotData data;
    {
        Context first = device_context();
        expect_device(data.run(first, DType::f32), Rung::jit);
        expect_device(data.run(first, DType::f32), Rung::in_process);
    }
    Context second = device_context();
    const Path stored = data.run(second, DType::f32);
    expect_device(stored, Rung::user_store);
    EXPECT_EQ(stored.status, StatusCode::ok);
    EXPECT_EQ(stored.describe(), "device (kcache: user_store)");
}

TEST_F(Ops, DisabledCacheRunsOnTheCpuAndSaysSo) {
    ::setenv("KCACHE_DISABLE", "1", 1);
    Context ctx = device_context();
    DotData data;
    for (DType dtype : kAllDTypes) {
        const Path path = data.run(ctx, dtype);
        EXPECT_EQ(path.backend, Backend::cpu);
        EXPECT_EQ(path.fallback, Fallback::not_built);
        EXPECT_EQ(path.status, StatusCode::disabled) << path.describe();
        EXPECT_NE(path.describe().find("kcache disabled"), std::string::npos) << path.describe();
    }
    const BatchnormShape shape{2, 3, 10};
    const auto x = random_values(60, 3), gamma = random_values(3, 4), beta = random_values(3, 5);
    auto bn = batchnorm_training(ctx, shape, x, gamma, beta, 1e-5f, Activation::none, DType::f32);
    ASSERT_TRUE(bn);
    EXPECT_EQ(bn->path.status, StatusCode::disabled) << bn->path.describe();
    expect_within(
        kk::tolerance(DType::f32), bn->values,
        kk::batchnorm_training_reference(shape, x, gamma, beta, 1e-5f, Activation::none).y,
        "batchnorm training on the CPU path");
}

// Native half products need cl_khr_fp16; kcache says unsupported up front
// (nothing is compiled) and the op answers from the CPU path.
TEST_F(Ops, UnsupportedVariantFallsBackToTheCpu) {
    Context ctx = device_context();
    DotData data;
    const Path path = data.run(ctx, DType::f16, DotArith::f16);
    if (path.backend == Backend::device) {
        GTEST_SKIP() << "this device has cl_khr_fp16: " << path.describe();
    }
    EXPECT_EQ(path.fallback, Fallback::not_built);
    EXPECT_EQ(path.status, StatusCode::unsupported) << path.describe();
    EXPECT_NE(path.message.find("cl_khr_fp16"), std::string::npos) << path.message;
    EXPECT_NE(path.describe().find("unsupported"), std::string::npos) << path.describe();
    // The f32-arithmetic variant of the same dtype still runs on the device.
    EXPECT_EQ(data.run(ctx, DType::f16).backend, Backend::device);
}

// A compile that cannot finish by the deadline: the helper is killed, the op
// answers from the CPU path, and the recorded timeout answers the next call
// at once, without compiling again.
TEST_F(Ops, TimeoutFallsBackAndIsRecorded) {
    Context ctx = device_context({.deadline = milliseconds(1)});
    DotData data;
    expect_cpu(data.run(ctx, DType::bf16), StatusCode::timeout);
    ctx.wait_for_background(milliseconds(30'000));  // the failure record has landed
    const Path second = data.run(ctx, DType::bf16);
    expect_cpu(second, StatusCode::timeout);
    EXPECT_EQ(second.rung, Rung::failure_record) << second.describe();
}

// fail_fast never compiles: the CPU path until some other context has built
// the program; then the store answers.
TEST_F(Ops, FailFastUsesOnlyWhatIsStored) {
    Context fast = device_context({.mode = kcache::Mode::fail_fast});
    DotData data;
    expect_cpu(data.run(fast, DType::f16), StatusCode::not_cached);
    Context blocking = device_context();
    expect_device(data.run(blocking, DType::f16), Rung::jit);
    Context fast_again = device_context({.mode = kcache::Mode::fail_fast});
    expect_device(data.run(fast_again, DType::f16), Rung::user_store);
}

// background answers not_ready at once and compiles meanwhile; once the
// compile lands, the op runs on the device.
TEST_F(Ops, BackgroundModeRunsOnTheCpuUntilTheCompileLands) {
    Context ctx = device_context({.mode = kcache::Mode::background});
    DotData data;
    expect_cpu(data.run(ctx, DType::f32), StatusCode::not_ready);
    ctx.wait_for_background(milliseconds(60'000));
    expect_device(data.run(ctx, DType::f32), Rung::user_store);
}

// Threads share one Context: one of them compiles (the others wait for that
// compile or hit it in process) and every result is right.
TEST_F(Ops, ThreadsShareOneContext) {
    Context ctx = device_context();
    DotData data;
    std::vector<Path> paths(4);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < paths.size(); ++t) {
        threads.emplace_back([&, t] { paths[t] = data.run(ctx, DType::f16); });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    int compiled = 0;
    for (const Path& path : paths) {
        EXPECT_EQ(path.backend, Backend::device) << path.describe();
        compiled += path.rung == Rung::jit ? 1 : 0;
    }
    EXPECT_GE(compiled, 1);
}

TEST_F(Ops, CpuOnlyContextSaysThereIsNoDevice) {
    Context ctx = Context::create({.device = DevicePolicy::cpu_only});
    EXPECT_FALSE(ctx.has_device());
    DotData data;
    const Path path = data.run(ctx, DType::bf16);
    EXPECT_EQ(path.backend, Backend::cpu);
    EXPECT_EQ(path.fallback, Fallback::no_device);
    EXPECT_FALSE(path.status.has_value()) << "kcache is not asked without a device";
    EXPECT_EQ(path.describe(), "cpu (fallback no_device: the context was created cpu_only)");
}

// A malformed KCACHE_* value: kcache will not open, the ops still answer.
TEST_F(Ops, UnopenableCacheRunsOnTheCpu) {
    ::setenv("KCACHE_MAX_SIZE", "lots", 1);
    Context ctx = Context::create();
    EXPECT_TRUE(ctx.has_device());
    EXPECT_EQ(ctx.readiness().fallback, Fallback::cache_unavailable);
    DotData data;
    const Path path = data.run(ctx, DType::f32);
    EXPECT_EQ(path.backend, Backend::cpu);
    EXPECT_EQ(path.fallback, Fallback::cache_unavailable);
    EXPECT_EQ(path.status, StatusCode::config_error);
    EXPECT_NE(path.message.find("KCACHE_MAX_SIZE"), std::string::npos) << path.message;
}

// Bad input is the caller's error, not a reason to fall back.
TEST_F(Ops, BadInputIsAnError) {
    Context ctx = Context::create({.device = DevicePolicy::cpu_only});
    const std::vector<float> three(3, 1.0f), four(4, 1.0f);
    auto short_y = dot(ctx, four, three, 2, 2, DType::f32);
    ASSERT_FALSE(short_y);
    EXPECT_EQ(short_y.error().code, ErrorCode::size_mismatch);
    auto half_arith = dot(ctx, four, four, 4, 1, DType::f32, DotArith::f16);
    ASSERT_FALSE(half_arith);
    EXPECT_EQ(half_arith.error().code, ErrorCode::invalid_shape);

    const Conv2dShape bad{.c = 3, .k = 4, .groups = 2};  // groups must divide C and K
    auto conv = conv2d(ctx, bad, three, four, {}, Activation::none, DType::f32);
    ASSERT_FALSE(conv);
    EXPECT_EQ(conv.error().code, ErrorCode::invalid_shape);
    auto conv_bias = conv2d(ctx, {.c = 3, .k = 4}, three, std::vector<float>(12, 1.0f), three,
                            Activation::none, DType::f32);
    ASSERT_FALSE(conv_bias);
    EXPECT_EQ(conv_bias.error().code, ErrorCode::size_mismatch);

    auto bn = batchnorm_inference(ctx, {1, 4, 1}, four, {four, four, three, four, 1e-5f},
                                  Activation::none, DType::f32);
    ASSERT_FALSE(bn);
    EXPECT_EQ(bn.error().code, ErrorCode::size_mismatch);
    auto negative =
        batchnorm_training(ctx, {1, -1, 1}, {}, {}, {}, 1e-5f, Activation::none, DType::f32);
    ASSERT_FALSE(negative);
    EXPECT_EQ(negative.error().code, ErrorCode::invalid_shape);
}

}  // namespace
}  // namespace ops::test
