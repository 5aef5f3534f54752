// conv2d: conv2d_direct, or conv2d_pointwise for 1x1 filters (kcache::cl::launch_conv2d picks).

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
    auto on_device = [&](kcache::cl::DeviceRun& run) {
        const std::size_t out_bytes = sizes->output * kk::element_size(dtype);
        kcache::cl::Conv2dBuffers b;
        b.x = run.upload(kk::encode(dtype, input));
        b.w = run.upload(kk::encode(dtype, weight));
        b.bias = bias.empty() ? nullptr : run.upload(kk::encode(dtype, bias));
        b.y = run.scratch(out_bytes);
        run.launch([&](const kcache::cl::LaunchTarget& t) {
            return kcache::cl::launch_conv2d(t, shape, b);
        });
        return Output{kk::decode(dtype, run.read(b.y, out_bytes)), {}};
    };
    auto on_cpu = [&] {
        const auto x = detail::rounded(dtype, input);
        const auto w = detail::rounded(dtype, weight);
        const auto b = detail::rounded(dtype, bias);
        return Output{detail::to_values(dtype, kk::conv2d_reference(shape, x, w, b, act)), {}};
    };
    return dispatch<Output>(ctx.impl(), choice, on_device, on_cpu);
}

}  // namespace ops
