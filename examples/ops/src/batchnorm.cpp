// batchnorm: batchnorm_inference, and for training batchnorm_stats first
// (kcache::cl::launch_batchnorm_training); both entry points come from one program.

#include "context_impl.hpp"
#include "op_support.hpp"

namespace ops {
namespace {

namespace kk = kcache::kernels;

// Checks the shape, `x` and each per-channel parameter; returns N*C*HW.
Result<std::size_t> check_batchnorm(const BatchnormShape& s, std::span<const float> x,
                                    std::initializer_list<std::span<const float>> per_channel) {
    if (s.n < 0 || s.c < 0 || s.hw < 0) {
        return kcache::fail(Error{ErrorCode::invalid_shape, "batchnorm: negative dimension"});
    }
    const std::size_t count = kk::batchnorm_work_items(s);
    if (x.size() != count) {
        return kcache::fail(detail::size_mismatch("batchnorm x", x.size(), count));
    }
    for (const auto& p : per_channel) {
        if (p.size() != static_cast<std::size_t>(s.c)) {
            return kcache::fail(detail::size_mismatch("a batchnorm parameter", p.size(), s.c));
        }
    }
    return count;
}

cl_mem upload_f32(kcache::cl::DeviceRun& run, std::span<const float> values) {
    return run.upload(kk::encode(DType::f32, values));
}

std::vector<float> read_f32(kcache::cl::DeviceRun& run, cl_mem mem, std::size_t count) {
    return kk::decode(DType::f32, run.read(mem, count * sizeof(float)));
}

}  // namespace

Result<Output> batchnorm_inference(Context& ctx, const BatchnormShape& shape,
                                   std::span<const float> x, const BatchnormParams& params,
                                   Activation act, DType dtype) {
    auto count = check_batchnorm(shape, x, {params.mean, params.var, params.gamma, params.beta});
    if (!count) {
        return kcache::fail(count.error());
    }
    const KernelChoice choice = ctx.impl().choose("batchnorm", detail::variant_params(dtype, act));
    auto on_device = [&](kcache::cl::DeviceRun& run) {
        const std::size_t out_bytes = *count * kk::element_size(dtype);
        kcache::cl::BatchnormBuffers b;
        b.x = run.upload(kk::encode(dtype, x));
        b.mean = upload_f32(run, params.mean);
        b.var = upload_f32(run, params.var);
        b.gamma = upload_f32(run, params.gamma);
        b.beta = upload_f32(run, params.beta);
        b.y = run.scratch(out_bytes);
        b.eps = params.eps;
        run.launch([&](const kcache::cl::LaunchTarget& t) {
            return kcache::cl::launch_batchnorm_inference(t, shape, b);
        });
        return Output{kk::decode(dtype, run.read(b.y, out_bytes)), {}};
    };
    auto on_cpu = [&] {
        const auto xr = detail::rounded(dtype, x);
        return Output{
            detail::to_values(dtype, kk::batchnorm_inference_reference(shape, xr, params, act)),
            {}};
    };
    return dispatch<Output>(ctx.impl(), choice, on_device, on_cpu);
}

Result<TrainingOutput> batchnorm_training(Context& ctx, const BatchnormShape& shape,
                                          std::span<const float> x, std::span<const float> gamma,
                                          std::span<const float> beta, float eps, Activation act,
                                          DType dtype) {
    auto count = check_batchnorm(shape, x, {gamma, beta});
    if (!count) {
        return kcache::fail(count.error());
    }
    const KernelChoice choice = ctx.impl().choose("batchnorm", detail::variant_params(dtype, act));
    const auto channels = static_cast<std::size_t>(shape.c);
    auto on_device = [&](kcache::cl::DeviceRun& run) {
        const std::size_t out_bytes = *count * kk::element_size(dtype);
        kcache::cl::BatchnormBuffers b;
        b.x = run.upload(kk::encode(dtype, x));
        b.mean = run.scratch(channels * sizeof(float));
        b.var = run.scratch(channels * sizeof(float));
        b.gamma = upload_f32(run, gamma);
        b.beta = upload_f32(run, beta);
        b.y = run.scratch(out_bytes);
        b.eps = eps;
        run.launch([&](const kcache::cl::LaunchTarget& t) {
            return kcache::cl::launch_batchnorm_training(t, shape, b);
        });
        TrainingOutput out;
        out.values = kk::decode(dtype, run.read(b.y, out_bytes));
        out.mean = read_f32(run, b.mean, channels);
        out.var = read_f32(run, b.var, channels);
        return out;
    };
    auto on_cpu = [&] {
        const auto xr = detail::rounded(dtype, x);
        const auto ref = kk::batchnorm_training_reference(shape, xr, gamma, beta, eps, act);
        TrainingOutput out;
        out.values = detail::to_values(dtype, ref.y);
        out.mean = detail::to_values(DType::f32, ref.mean);
        out.var = detail::to_values(DType::f32, ref.var);
        return out;
    };
    return dispatch<TrainingOutput>(ctx.impl(), choice, on_device, on_cpu);
}

}  // namespace ops
