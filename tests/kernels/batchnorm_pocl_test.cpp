// Known-answer tests for batchnorm on PoCL: inference and training forward
// (Welford/Chan statistics, then normalisation) for every dtype.

#include "cl_harness.hpp"
#include "kcache/kernels/launch.hpp"
#include "kcache/kernels/reference.hpp"

namespace kcache::test {
namespace {

using kernels::Activation;
using kernels::BatchnormShape;
using kernels::DType;

constexpr std::size_t kLocal = 256;
constexpr float kEps = 1e-5f;

std::string bn_id(DType dtype, Activation act) {
    return "batchnorm:dtype=" + std::string(kernels::to_string(dtype)) +
           ",act=" + (act == Activation::relu ? "relu" : "none");
}

Buffer floats(const std::vector<float>& v) {
    return Pocl::buffer(kernels::encode(DType::f32, v));
}

// Runs batchnorm_inference with per-channel `mean`, `var`, `gamma`, `beta` buffers.
std::vector<float> run_inference(DType dtype, Activation act, const BatchnormShape& sh, cl_mem x,
                                 cl_mem mean, cl_mem var, cl_mem gamma, cl_mem beta) {
    Kernel k = Pocl::kernel(bn_id(dtype, act), "batchnorm_inference");
    if (!k)
        return {};
    const std::size_t bytes = kernels::batchnorm_work_items(sh) * kernels::element_size(dtype);
    Buffer y = Pocl::buffer(bytes);
    set_args(k.get(), x, mean, var, gamma, beta, y.get(), kernels::batchnorm_shape_arg(sh), kEps);
    Pocl::run(k.get(), {kernels::padded_global_size(kernels::batchnorm_work_items(sh), kLocal)},
              {kLocal});
    return kernels::decode(dtype, Pocl::read(y.get(), bytes));
}

const BatchnormShape kShapes[] = {{1, 1, 1},     {2, 3, 35}, {4, 16, 1}, {1, 5, 1000},
                                  {3, 2, 33333}, {7, 1, 3},  {0, 4, 9}};

void check_inference(DType dtype) {
    std::uint32_t seed = 200;
    for (const BatchnormShape& sh : kShapes) {
        const auto x = random_values(dtype, kernels::batchnorm_work_items(sh), ++seed, -3, 3);
        const auto mean = random_values(DType::f32, sh.c, ++seed);
        const auto var = random_values(DType::f32, sh.c, ++seed, 0.0f, 4.0f);
        const auto gamma = random_values(DType::f32, sh.c, ++seed, 0.5f, 2.0f);
        const auto beta = random_values(DType::f32, sh.c, ++seed);
        Buffer xb = Pocl::buffer(kernels::encode(dtype, x));
        Buffer mb = floats(mean), vb = floats(var), gb = floats(gamma), bb = floats(beta);
        for (Activation act : {Activation::none, Activation::relu}) {
            const auto got =
                run_inference(dtype, act, sh, xb.get(), mb.get(), vb.get(), gb.get(), bb.get());
            expect_close(
                dtype, got,
                kernels::batchnorm_inference_reference(sh, x, {mean, var, gamma, beta, kEps}, act),
                "batchnorm inference n=" + std::to_string(sh.n) + " c=" + std::to_string(sh.c) +
                    " hw=" + std::to_string(sh.hw));
        }
    }
}

// Training forward on data centred at `offset`: a naive sum of squares would
// lose the variance to cancellation there.
void check_training(DType dtype, float offset) {
    std::uint32_t seed = 300;
    for (const BatchnormShape& sh : kShapes) {
        const std::string what = "batchnorm training offset " + std::to_string(offset) +
                                 " n=" + std::to_string(sh.n) + " c=" + std::to_string(sh.c) +
                                 " hw=" + std::to_string(sh.hw);
        const auto x = random_values(dtype, kernels::batchnorm_work_items(sh), ++seed,
                                     offset - 1.0f, offset + 1.0f);
        const auto gamma = random_values(DType::f32, sh.c, ++seed, 0.5f, 2.0f);
        const auto beta = random_values(DType::f32, sh.c, ++seed);
        Buffer xb = Pocl::buffer(kernels::encode(dtype, x));
        Buffer mb = Pocl::buffer(sh.c * sizeof(float)), vb = Pocl::buffer(sh.c * sizeof(float));
        Buffer gb = floats(gamma), bb = floats(beta);
        Kernel stats = Pocl::kernel(bn_id(dtype, Activation::relu), "batchnorm_stats");
        ASSERT_TRUE(stats);
        set_args(stats.get(), xb.get(), mb.get(), vb.get(), kernels::batchnorm_shape_arg(sh));
        Pocl::run(stats.get(), {sh.c * kLocal}, {kLocal});
        const auto want =
            kernels::batchnorm_training_reference(sh, x, gamma, beta, kEps, Activation::relu);
        // Statistics are f32 whatever the element type.
        const auto mean = kernels::decode(DType::f32, Pocl::read(mb.get(), sh.c * 4));
        const auto var = kernels::decode(DType::f32, Pocl::read(vb.get(), sh.c * 4));
        expect_close(DType::f32, mean, want.mean, what + " mean");
        expect_close(DType::f32, var, want.var, what + " var");
        const auto y = run_inference(dtype, Activation::relu, sh, xb.get(), mb.get(), vb.get(),
                                     gb.get(), bb.get());
        expect_close(dtype, y, want.y, what + " y");
    }
}

TEST_F(Pocl, BatchnormInferenceF32) {
    check_inference(DType::f32);
}
TEST_F(Pocl, BatchnormInferenceF16) {
    check_inference(DType::f16);
}
TEST_F(Pocl, BatchnormInferenceBf16) {
    check_inference(DType::bf16);
}
TEST_F(Pocl, BatchnormTrainingF32) {
    check_training(DType::f32, 0.0f);
    check_training(DType::f32, 100.0f);
}
TEST_F(Pocl, BatchnormTrainingF16) {
    check_training(DType::f16, 0.0f);
    check_training(DType::f16, 100.0f);
}
TEST_F(Pocl, BatchnormTrainingBf16) {
    check_training(DType::bf16, 0.0f);
    check_training(DType::bf16, 100.0f);
}

}  // namespace
}  // namespace kcache::test
