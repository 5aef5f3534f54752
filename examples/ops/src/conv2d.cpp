// conv2d: conv2d_direct, or conv2d_pointwise for 1x1 filters (kernels/cl/conv2d.cl).

#include "context_impl.hpp"
#include "op_support.hpp"

namespace ops {
namespace {

namespace kk = kcache::kernels;

struct Conv2dSizes {
    std::size_t input, weight, output;
};

Result<Conv2dSizes> check_conv2d(const Conv2dShape& s, std::span<const float> input,
                                 std::span<const float> weight, std::span<const float> bias) {
    if (!s.valid()) {
        return kcache::fail(Error{ErrorCode::invalid_shape, "conv2d: shape out of range"});
    }
    auto z = [](std::int32_t v) { return static_cast<std::size_t>(v); };
    const Conv2dSizes want{z(s.n) * z(s.c) * z(s.h) * z(s.w),
                           z(s.k) * z(s.c / s.groups) * z(s.r) * z(s.s),
                           z(s.n) * z(s.k) * z(s.out_h()) * z(s.out_w())};
    if (input.size() != want.input) {
        return kcache::fail(detail::size_mismatch("conv2d input", input.size(), want.input));
    }
    if (weight.size() != want.weight) {
        return kcache::fail(detail::size_mismatch("conv2d weight", weight.size(), want.weight));
    }
    if (!bias.empty() && bias.size() != z(s.k)) {
        return kcache::fail(detail::size_mismatch("conv2d bias", bias.size(), z(s.k)));
    }
    return want;
}

}  // namespace

Result<Output> conv2d(Context& ctx, const Conv2dShape& shape, std::span<const float> input,
                      std::span<const float> weight, std::span<const float> bias, Activation act,
                      DType dtype) {
    auto sizes = check_conv2d(shape, input, weight, bias);
    if (!sizes) {
        return kcache::fail(sizes.error());
    }
    const KernelChoice choice = ctx.impl().choose("conv2d", detail::variant_params(dtype, act));
    auto on_device = [&](detail::DeviceRun& run) {
        cl_mem x = run.upload(kk::encode(dtype, input));
        cl_mem w = run.upload(kk::encode(dtype, weight));
        const cl_int has_bias = bias.empty() ? 0 : 1;
        cl_mem b = has_bias ? run.upload(kk::encode(dtype, bias)) : x;  // unread without bias
        const std::size_t out_bytes = sizes->output * kk::element_size(dtype);
        cl_mem y = run.scratch(out_bytes);
        const auto args = kk::conv2d_shape_args(shape);
        const std::string entry(kk::conv2d_entry_point(shape));
        run.launch(entry.c_str(),
                   {kk::padded_global_size(kk::conv2d_work_items(shape), choice.local_size)},
                   {choice.local_size}, x, w, b, y, args[0], args[1], args[2], args[3], has_bias);
        return Output{kk::decode(dtype, run.read(y, out_bytes)), {}};
    };
    auto on_cpu = [&] {
        const auto x = detail::rounded(dtype, input);
        const auto w = detail::rounded(dtype, weight);
        const auto b = detail::rounded(dtype, bias);
        return Output{detail::to_values(dtype, kk::conv2d_reference(shape, x, w, b, act)), {}};
    };
    return dispatch<Output>(ctx.impl(), choice.request, on_device, on_cpu);
}

}  // namespace ops
