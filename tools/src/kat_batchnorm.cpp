// batchnorm's known-answer test (kernels/cl/batchnorm.cl): inference with
// given statistics, and the training forward (batchnorm_stats, then inference
// with the statistics it computed) on data centred far from zero.

#include "kat_check.hpp"

namespace kcache::cli {
namespace {

using kernels::BatchnormShape;

constexpr BatchnormShape kInference{.n = 2, .c = 3, .hw = 35};
// Fewer values per channel than work-items in a group: some items merge empty partials.
constexpr BatchnormShape kTraining{.n = 3, .c = 5, .hw = 33};
// Training inputs lie in [kOffset - 1, kOffset + 1): a sum-of-squares variance cancels there.
constexpr float kOffset = 100.0f;
constexpr float kEps = 1e-5f;

std::string describe(const char* what, const BatchnormShape& s) {
    return std::string(what) + " n " + std::to_string(s.n) + " c " + std::to_string(s.c) + " hw " +
           std::to_string(s.hw);
}

cl_mem upload_f32(Launcher& run, const std::vector<float>& values) {
    return run.upload(kernels::encode(kernels::DType::f32, values));
}

// Enqueues batchnorm_inference of `x` with per-channel f32 buffers; returns y.
cl_mem launch_inference(Launcher& run, const KatCase& kat, const BatchnormShape& shape, cl_mem x,
                        cl_mem mean, cl_mem var, cl_mem gamma, cl_mem beta) {
    const std::size_t count = kernels::batchnorm_work_items(shape);
    cl_mem y = run.scratch(widest_bytes(count));
    run.launch("batchnorm_inference", {kernels::padded_global_size(count, kat.local_size)},
               {kat.local_size},
               {x, mean, var, gamma, beta, y, kernels::batchnorm_shape_arg(shape), kEps});
    return y;
}

std::vector<float> read_elements(Launcher& run, const KatCase& kat, const BatchnormShape& shape,
                                 cl_mem y) {
    const std::size_t bytes =
        kernels::batchnorm_work_items(shape) * kernels::element_size(kat.dtype());
    return kernels::decode(kat.dtype(), run.read(y, bytes));
}

void check_inference(Launcher& run, KatChecks& checks, const KatCase& kat) {
    const auto c = static_cast<std::size_t>(kInference.c);
    const auto x = kat_values(kat.dtype(), kernels::batchnorm_work_items(kInference), 40, -3, 3);
    const auto mean = kat_values(kernels::DType::f32, c, 41);
    const auto var = kat_values(kernels::DType::f32, c, 42, 0, 4);
    const auto gamma = kat_values(kernels::DType::f32, c, 43, 0.5f, 2);
    const auto beta = kat_values(kernels::DType::f32, c, 44);
    cl_mem xm = run.upload(kernels::encode(kat.dtype(), x), widest_bytes(x.size()));
    cl_mem y =
        launch_inference(run, kat, kInference, xm, upload_f32(run, mean), upload_f32(run, var),
                         upload_f32(run, gamma), upload_f32(run, beta));
    const auto got = read_elements(run, kat, kInference, y);
    if (checks.ran(run)) {
        checks.compare(describe("batchnorm_inference", kInference), kat.tolerance, got,
                       kernels::batchnorm_inference_reference(
                           kInference, x, {mean, var, gamma, beta, kEps}, kat.activation()));
    }
}

void check_training(Launcher& run, KatChecks& checks, const KatCase& kat) {
    const auto c = static_cast<std::size_t>(kTraining.c);
    const auto x = kat_values(kat.dtype(), kernels::batchnorm_work_items(kTraining), 50,
                              kOffset - 1, kOffset + 1);
    const auto gamma = kat_values(kernels::DType::f32, c, 51, 0.5f, 2);
    const auto beta = kat_values(kernels::DType::f32, c, 52);
    cl_mem xm = run.upload(kernels::encode(kat.dtype(), x), widest_bytes(x.size()));
    cl_mem mean = run.scratch(c * sizeof(float)), var = run.scratch(c * sizeof(float));
    const std::size_t ls = kat.local_size;
    run.launch("batchnorm_stats", {c * ls}, {ls},
               {xm, mean, var, kernels::batchnorm_shape_arg(kTraining)});
    cl_mem y = launch_inference(run, kat, kTraining, xm, mean, var, upload_f32(run, gamma),
                                upload_f32(run, beta));
    const auto got_y = read_elements(run, kat, kTraining, y);
    const auto got_mean = kernels::decode(kernels::DType::f32, run.read(mean, c * sizeof(float)));
    const auto got_var = kernels::decode(kernels::DType::f32, run.read(var, c * sizeof(float)));
    if (!checks.ran(run)) {
        return;
    }
    const auto want =
        kernels::batchnorm_training_reference(kTraining, x, gamma, beta, kEps, kat.activation());
    // The statistics are f32 whatever the element type.
    const auto f32 = kernels::tolerance(kernels::DType::f32);
    checks.compare(describe("batchnorm_stats mean", kTraining), f32, got_mean, want.mean);
    checks.compare(describe("batchnorm_stats var", kTraining), f32, got_var, want.var);
    checks.compare(describe("training batchnorm_inference", kTraining), kat.tolerance, got_y,
                   want.y);
}

}  // namespace

KatOutcome batchnorm_kat(Launcher& run, const KatCase& kat) {
    KatChecks checks;
    check_inference(run, checks, kat);
    check_training(run, checks, kat);
    return checks.outcome();
}

}  // namespace kcache::cli
