// Known-answer tests for batchnorm on PoCL: inference and training forward
// (Welford/Chan statistics, then normalisation) for every dtype.

#include "cl_harness.hpp"
#include "kcache/cl/launch.hpp"
#include "kcache/kernels/reference.hpp"

namespace kcache::test {
namespace {

using kernels::Activation;
using kernels::BatchnormShape;
using kernels::DType;

constexpr float kEps = 1e-5f;

std::string bn_id(DType dtype, Activation act) {
    return "batchnorm:dtype=" + std::string(kernels::to_string(dtype)) +
           ",act=" + (act == Activation::relu ? "relu" : "none");
}

cl_mem floats(cl::DeviceRun& run, const std::vector<float>& v) {
    return run.upload(kernels::encode(DType::f32, v));
}

std::vector<float> read_floats(cl::DeviceRun& run, cl_mem mem, std::size_t count) {
    return kernels::decode(DType::f32, run.read(mem, count * sizeof(float)));
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
        for (Activation act : {Activation::none, Activation::relu}) {
            auto run = KernelsCl::device_run(bn_id(dtype, act));
            cl::BatchnormBuffers b;
            b.x = run->upload(kernels::encode(dtype, x));
            b.mean = floats(*run, mean);
            b.var = floats(*run, var);
            b.gamma = floats(*run, gamma);
            b.beta = floats(*run, beta);
            b.y = run->scratch(x.size() * kernels::element_size(dtype));
            b.eps = kEps;
            run->launch([&](const cl::LaunchTarget& t) {
                return cl::launch_batchnorm_inference(t, sh, b);
            });
            const auto got =
                kernels::decode(dtype, run->read(b.y, x.size() * kernels::element_size(dtype)));
            EXPECT_TRUE(run->ok()) << run->error();
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
        const auto c = static_cast<std::size_t>(sh.c);
        auto run = KernelsCl::device_run(bn_id(dtype, Activation::relu));
        cl::BatchnormBuffers b;
        b.x = run->upload(kernels::encode(dtype, x));
        b.mean = run->scratch(c * sizeof(float));
        b.var = run->scratch(c * sizeof(float));
        b.gamma = floats(*run, gamma);
        b.beta = floats(*run, beta);
        b.y = run->scratch(x.size() * kernels::element_size(dtype));
        b.eps = kEps;
        run->launch(
            [&](const cl::LaunchTarget& t) { return cl::launch_batchnorm_training(t, sh, b); });
        // Statistics are f32 whatever the element type.
        const auto mean = read_floats(*run, b.mean, c);
        const auto var = read_floats(*run, b.var, c);
        const auto y =
            kernels::decode(dtype, run->read(b.y, x.size() * kernels::element_size(dtype)));
        ASSERT_TRUE(run->ok()) << run->error();
        const auto want =
            kernels::batchnorm_training_reference(sh, x, gamma, beta, kEps, Activation::relu);
        expect_close(DType::f32, mean, want.mean, what + " mean");
        expect_close(DType::f32, var, want.var, what + " var");
        expect_close(dtype, y, want.y, what + " y");
    }
}

class Batchnorm : public KernelsClByDType {};

TEST_P(Batchnorm, Inference) {
    check_inference(GetParam());
}
TEST_P(Batchnorm, Training) {
    check_training(GetParam(), 0.0f);
    check_training(GetParam(), 100.0f);
}
INSTANTIATE_TEST_SUITE_P(KernelsCl, Batchnorm, ::testing::ValuesIn(kAllDTypes), dtype_name);

}  // namespace
}  // namespace kcache::test
