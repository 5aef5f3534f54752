// batchnorm: batchnorm_inference, and for training batchnorm_stats first
// (kernels/cl/batchnorm.cl); both entry points come from one program.

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

cl_mem upload_f32(detail::DeviceRun& run, std::span<const float> values) {
    return run.upload(kk::encode(DType::f32, values));
}

std::vector<float> read_f32(detail::DeviceRun& run, cl_mem mem, std::size_t count) {
    return kk::decode(DType::f32, run.read(mem, count * sizeof(float)));
}

// Enqueues batchnorm_inference of `x` into a new buffer; returns it.
cl_mem launch_inference(detail::DeviceRun& run, const BatchnormShape& shape, std::size_t ls,
                        DType dtype, cl_mem x, cl_mem mean, cl_mem var, cl_mem gamma, cl_mem beta,
                        float eps) {
    const std::size_t count = kk::batchnorm_work_items(shape);
    cl_mem y = run.scratch(count * kk::element_size(dtype));
    run.launch("batchnorm_inference", {kk::padded_global_size(count, ls)}, {ls}, x, mean, var,
               gamma, beta, y, kk::batchnorm_shape_arg(shape), eps);
    return y;
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
    auto on_device = [&](detail::DeviceRun& run) {
        cl_mem xb = run.upload(kk::encode(dtype, x));
        cl_mem y =
            launch_inference(run, shape, choice.local_size, dtype, xb, upload_f32(run, params.mean),
                             upload_f32(run, params.var), upload_f32(run, params.gamma),
                             upload_f32(run, params.beta), params.eps);
        return Output{kk::decode(dtype, run.read(y, *count * kk::element_size(dtype))), {}};
    };
    auto on_cpu = [&] {
        const auto xr = detail::rounded(dtype, x);
        return Output{
            detail::to_values(dtype, kk::batchnorm_inference_reference(shape, xr, params, act)),
            {}};
    };
    return dispatch<Output>(ctx.impl(), choice.request, on_device, on_cpu);
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
    auto on_device = [&](detail::DeviceRun& run) {
        const std::size_t ls = choice.local_size;
        cl_mem xb = run.upload(kk::encode(dtype, x));
        cl_mem mean = run.scratch(channels * sizeof(float));
        cl_mem var = run.scratch(channels * sizeof(float));
        if (channels > 0) {  // one work-group per channel; none is not a valid launch
            run.launch("batchnorm_stats", {channels * ls}, {ls}, xb, mean, var,
                       kk::batchnorm_shape_arg(shape));
        }
        cl_mem y = launch_inference(run, shape, ls, dtype, xb, mean, var, upload_f32(run, gamma),
                                    upload_f32(run, beta), eps);
        TrainingOutput out;
        out.values = kk::decode(dtype, run.read(y, *count * kk::element_size(dtype)));
        out.mean = read_f32(run, mean, channels);
        out.var = read_f32(run, var, channels);
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
    return dispatch<TrainingOutput>(ctx.impl(), choice.request, on_device, on_cpu);
}

}  // namespace ops
