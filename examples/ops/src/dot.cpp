// dot: dot_partial then dot_finish, two launches of one program (kcache::cl::launch_dot).

#include <cstdint>
#include <limits>

#include "context_impl.hpp"
#include "op_support.hpp"

namespace ops {
namespace {

namespace kk = kcache::kernels;

Result<std::size_t> check_dot(std::span<const float> x, std::span<const float> y, std::size_t n,
                              std::size_t batch, DType dtype, DotArith arith) {
    if (n != 0 && batch > std::numeric_limits<std::uint32_t>::max() / n) {
        return kcache::fail(Error{ErrorCode::invalid_shape, "dot: n * batch exceeds 32 bits"});
    }
    if (arith == DotArith::f16 && dtype != DType::f16) {
        return kcache::fail(Error{ErrorCode::invalid_shape, "dot: arith f16 needs dtype f16"});
    }
    if (x.size() != n * batch) {
        return kcache::fail(detail::size_mismatch("dot x", x.size(), n * batch));
    }
    if (y.size() != n * batch) {
        return kcache::fail(detail::size_mismatch("dot y", y.size(), n * batch));
    }
    return n * batch;
}

}  // namespace

Result<Output> dot(Context& ctx, std::span<const float> x, std::span<const float> y, std::size_t n,
                   std::size_t batch, DType dtype, DotArith arith) {
    if (auto checked = check_dot(x, y, n, batch, dtype, arith); !checked) {
        return kcache::fail(checked.error());
    }
    const KernelChoice choice =
        ctx.impl().choose("dot", {{"dtype", std::string(kk::to_string(dtype))},
                                  {"arith", arith == DotArith::f16 ? "f16" : "f32"}});
    auto on_device = [&](kcache::cl::DeviceRun& run) {
        const std::size_t out_bytes = batch * kk::element_size(dtype);
        kcache::cl::DotBuffers b;
        b.x = run.upload(kk::encode(dtype, x));
        b.y = run.upload(kk::encode(dtype, y));
        b.partial = run.scratch(kcache::cl::dot_partial_bytes(n, batch, choice.local_size));
        b.out = run.scratch(out_bytes);
        run.launch([&](const kcache::cl::LaunchTarget& t) {
            return kcache::cl::launch_dot(t, n, batch, b);
        });
        return Output{kk::decode(dtype, run.read(b.out, out_bytes)), {}};
    };
    auto on_cpu = [&] {
        const auto xr = detail::rounded(dtype, x);
        const auto yr = detail::rounded(dtype, y);
        return Output{detail::to_values(dtype, kk::dot_reference(xr, yr, n, batch)), {}};
    };
    return dispatch<Output>(ctx.impl(), choice, on_device, on_cpu);
}

}  // namespace ops
