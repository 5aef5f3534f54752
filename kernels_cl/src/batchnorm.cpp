// batchnorm (kernels/cl/batchnorm.cl): its launchers, and its known-answer
// test: inference with given statistics, and the training forward
// (batchnorm_stats, then inference with the statistics it computed) on data
// centred far from zero; inference again at a real size.

#include "kcache/cl/batchnorm.hpp"

#include "enqueue.hpp"
#include "kat_check.hpp"

namespace kcache::cl {

namespace {

bool non_negative(const kernels::BatchnormShape& shape) {
    return shape.n >= 0 && shape.c >= 0 && shape.hw >= 0;
}

}  // namespace

Launched launch_batchnorm_inference(const LaunchTarget& target,
                                    const kernels::BatchnormShape& shape,
                                    const BatchnormBuffers& buffers) {
    if (auto bad = detail::bad_call(target, "launch_batchnorm_inference", non_negative(shape),
                                    "negative dimension")) {
        return fail(*bad);
    }
    const std::size_t ls = target.local_size;
    return detail::enqueue(target, "batchnorm_inference",
                           {kernels::padded_global_size(kernels::batchnorm_work_items(shape), ls)},
                           {ls},
                           {buffers.x, buffers.mean, buffers.var, buffers.gamma, buffers.beta,
                            buffers.y, kernels::batchnorm_shape_arg(shape), buffers.eps},
                           target.wait);
}

Launched launch_batchnorm_stats(const LaunchTarget& target, const kernels::BatchnormShape& shape,
                                const BatchnormBuffers& buffers) {
    if (auto bad = detail::bad_call(target, "launch_batchnorm_stats", non_negative(shape),
                                    "negative dimension")) {
        return fail(*bad);
    }
    if (shape.c == 0) {  // one work-group per channel; none is not a valid launch
        return detail::marker(target);
    }
    const std::size_t ls = target.local_size;
    return detail::enqueue(
        target, "batchnorm_stats", {static_cast<std::size_t>(shape.c) * ls}, {ls},
        {buffers.x, buffers.mean, buffers.var, kernels::batchnorm_shape_arg(shape)}, target.wait);
}

Launched launch_batchnorm_training(const LaunchTarget& target, const kernels::BatchnormShape& shape,
                                   const BatchnormBuffers& buffers) {
    auto stats = launch_batchnorm_stats(target, shape, buffers);
    if (!stats) {
        return stats;
    }
    const cl_event first = stats->get();
    LaunchTarget then = target;
    then.wait = {&first, 1};
    return launch_batchnorm_inference(then, shape, buffers);
}

namespace {

using kernels::BatchnormShape;

constexpr BatchnormShape kInference{.n = 2, .c = 3, .hw = 35};
// Inference at a real size: 131106 elements (256 KiB as f16), hundreds of
// work-groups, the last one partial.
constexpr BatchnormShape kLargeInference{.n = 2, .c = 3, .hw = 21851};
// Fewer values per channel than work-items in a group: some items merge empty partials.
constexpr BatchnormShape kTraining{.n = 3, .c = 5, .hw = 33};
// Training inputs lie in [kOffset - 1, kOffset + 1): a sum-of-squares variance cancels there.
constexpr float kOffset = 100.0f;
constexpr float kEps = 1e-5f;

std::string describe(const char* what, const BatchnormShape& s) {
    return std::string(what) + " n " + std::to_string(s.n) + " c " + std::to_string(s.c) + " hw " +
           std::to_string(s.hw);
}

cl_mem upload_f32(DeviceRun& run, const std::vector<float>& values) {
    return run.upload(kernels::encode(kernels::DType::f32, values));
}

std::vector<float> read_f32(DeviceRun& run, cl_mem mem, std::size_t count) {
    return kernels::decode(kernels::DType::f32, run.read(mem, count * sizeof(float)));
}

std::vector<float> read_elements(DeviceRun& run, const KatCase& kat, const BatchnormShape& shape,
                                 cl_mem y) {
    const std::size_t bytes =
        kernels::batchnorm_work_items(shape) * kernels::element_size(kat.dtype());
    return kernels::decode(kat.dtype(), run.read(y, bytes));
}

// Buffers of x (as `kat`'s dtype) and y for `shape`, with eps; the per-channel ones unset.
BatchnormBuffers elements(DeviceRun& run, const KatCase& kat, const BatchnormShape& shape,
                          const std::vector<float>& x) {
    BatchnormBuffers b;
    b.x = run.upload(kernels::encode(kat.dtype(), x), widest_bytes(x.size()));
    b.y = run.scratch(widest_bytes(kernels::batchnorm_work_items(shape)));
    b.eps = kEps;
    return b;
}

void check_inference(DeviceRun& run, KatChecks& checks, const KatCase& kat,
                     const BatchnormShape& shape, std::uint32_t seed) {
    const auto c = static_cast<std::size_t>(shape.c);
    const auto x = kat_values(kat.dtype(), kernels::batchnorm_work_items(shape), seed, -3, 3);
    const auto mean = kat_values(kernels::DType::f32, c, seed + 1);
    const auto var = kat_values(kernels::DType::f32, c, seed + 2, 0, 4);
    const auto gamma = kat_values(kernels::DType::f32, c, seed + 3, 0.5f, 2);
    const auto beta = kat_values(kernels::DType::f32, c, seed + 4);
    BatchnormBuffers b = elements(run, kat, shape, x);
    b.mean = upload_f32(run, mean);
    b.var = upload_f32(run, var);
    b.gamma = upload_f32(run, gamma);
    b.beta = upload_f32(run, beta);
    run.launch([&](const LaunchTarget& t) { return launch_batchnorm_inference(t, shape, b); });
    const auto got = read_elements(run, kat, shape, b.y);
    if (checks.ran(run)) {
        checks.compare(describe("batchnorm_inference", shape), kat.tolerance, got,
                       kernels::batchnorm_inference_reference(
                           shape, x, {mean, var, gamma, beta, kEps}, kat.activation()));
    }
}

void check_training(DeviceRun& run, KatChecks& checks, const KatCase& kat) {
    const auto c = static_cast<std::size_t>(kTraining.c);
    const auto x = kat_values(kat.dtype(), kernels::batchnorm_work_items(kTraining), kat.seed + 50,
                              kOffset - 1, kOffset + 1);
    const auto gamma = kat_values(kernels::DType::f32, c, kat.seed + 51, 0.5f, 2);
    const auto beta = kat_values(kernels::DType::f32, c, kat.seed + 52);
    BatchnormBuffers b = elements(run, kat, kTraining, x);
    b.mean = run.scratch(c * sizeof(float));
    b.var = run.scratch(c * sizeof(float));
    b.gamma = upload_f32(run, gamma);
    b.beta = upload_f32(run, beta);
    run.launch([&](const LaunchTarget& t) { return launch_batchnorm_training(t, kTraining, b); });
    const auto got_y = read_elements(run, kat, kTraining, b.y);
    const auto got_mean = read_f32(run, b.mean, c);
    const auto got_var = read_f32(run, b.var, c);
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

KatResult batchnorm_kat(DeviceRun& run, const KatCase& kat) {
    KatChecks checks(kat.outputs);
    check_inference(run, checks, kat, kInference, kat.seed + 40);
    check_inference(run, checks, kat, kLargeInference, kat.seed + 45);
    check_training(run, checks, kat);
    return checks.result();
}

}  // namespace

const KernelKat batchnorm_known_answer{"batchnorm", batchnorm_kat};

}  // namespace kcache::cl
