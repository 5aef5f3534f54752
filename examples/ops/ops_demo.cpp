// Runs each op of the ops library once and prints the path it took and how
// far its result is from the CPU reference (in units of the documented tolerance).
//   ops_demo            run on the first OpenCL device, programs from kcache
//   ops_demo --cpu      run every op on the CPU path
// kcache reads its usual environment (KCACHE_DIR, KCACHE_JIT_PATH, KCACHE_DISABLE…).

#include <cmath>
#include <cstdio>
#include <cstring>

#include "ops/ops.hpp"

namespace {

namespace kk = kcache::kernels;

// `count` values spread over [lo, hi) (a fixed low-discrepancy sequence from `seed`).
std::vector<float> values(std::size_t count, std::uint32_t seed, float lo, float hi) {
    std::vector<float> v(count);
    for (std::size_t i = 0; i < count; ++i) {
        const double t = std::fmod(0.6180339887 * static_cast<double>(i + 1) + 0.1 * seed, 1.0);
        v[i] = lo + static_cast<float>(t) * (hi - lo);
    }
    return v;
}

// Returns the largest |got - want| over its allowed error (<= 1 passes).
double worst(ops::DType dtype, const std::vector<float>& got,
             const std::vector<kk::RefValue>& want) {
    if (got.size() != want.size()) {
        return INFINITY;
    }
    const kk::Tolerance tol = kk::tolerance(dtype);
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double allowed = kk::allowed_error(tol, want[i]);
        worst = std::max(worst, std::fabs(got[i] - want[i].value) / allowed);
    }
    return worst;
}

std::vector<float> rounded(ops::DType dtype, std::vector<float> v) {
    for (float& x : v) {
        x = kk::round_to(dtype, x);
    }
    return v;
}

template <class Out>
int report(const char* op, ops::DType dtype, const ops::Result<Out>& out,
           const std::vector<kk::RefValue>& want) {
    if (!out) {
        std::printf("%-22s %-4s error: %s\n", op, kk::to_string(dtype).data(),
                    out.error().message.c_str());
        return 1;
    }
    const double w = worst(dtype, out->values, want);
    std::printf("%-22s %-4s %-6s error/tolerance %.3f  %s\n", op, kk::to_string(dtype).data(),
                w <= 1.0 ? "ok" : "WRONG", w, out->path.describe().c_str());
    return w <= 1.0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    ops::Options options;
    if (argc > 1 && std::strcmp(argv[1], "--cpu") == 0) {
        options.device = ops::DevicePolicy::cpu_only;
    }
    ops::Context ctx = ops::Context::create(options);
    std::printf("device: %s\n", ctx.has_device() ? ctx.device_name().c_str() : "(none)");
    int failures = 0;

    const ops::Conv2dShape conv{
        .n = 1, .c = 3, .h = 16, .w = 16, .k = 8, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};
    const auto x = values(1 * 3 * 16 * 16, 1, -1, 1), w = values(8 * 3 * 3 * 3, 2, -1, 1);
    const auto bias = values(8, 3, -1, 1);
    const auto d = ops::DType::f16;
    failures +=
        report("conv2d (relu)", d, ops::conv2d(ctx, conv, x, w, bias, ops::Activation::relu, d),
               kk::conv2d_reference(conv, rounded(d, x), rounded(d, w), rounded(d, bias),
                                    ops::Activation::relu));

    const auto a = values(4096, 4, -1, 1), b = values(4096, 5, -1, 1);
    const auto bf = ops::DType::bf16;
    failures += report("dot", bf, ops::dot(ctx, a, b, 1024, 4, bf),
                       kk::dot_reference(rounded(bf, a), rounded(bf, b), 1024, 4));

    const ops::BatchnormShape bn{.n = 2, .c = 4, .hw = 100};
    const auto bx = values(800, 6, -3, 3), mean = values(4, 7, -1, 1);
    const auto var = values(4, 8, 0.5f, 2), gamma = values(4, 9, 0.5f, 2),
               beta = values(4, 10, -1, 1);
    const auto f = ops::DType::f32;
    const ops::BatchnormParams params{mean, var, gamma, beta, 1e-5f};
    failures += report("batchnorm_inference", f,
                       ops::batchnorm_inference(ctx, bn, bx, params, ops::Activation::none, f),
                       kk::batchnorm_inference_reference(bn, bx, params, ops::Activation::none));
    failures += report(
        "batchnorm_training", f,
        ops::batchnorm_training(ctx, bn, bx, gamma, beta, 1e-5f, ops::Activation::none, f),
        kk::batchnorm_training_reference(bn, bx, gamma, beta, 1e-5f, ops::Activation::none).y);
    return failures == 0 ? 0 : 1;
}
