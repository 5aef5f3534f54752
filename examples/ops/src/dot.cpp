// dot: dot_partial then dot_finish (kernels/cl/dot.cl), two launches of one program.

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
    auto on_device = [&](detail::DeviceRun& run) {
        const std::size_t ls = choice.local_size;
        const std::size_t groups = kk::dot_groups(n, ls);
        const std::size_t out_bytes = batch * kk::element_size(dtype);
        cl_mem xb = run.upload(kk::encode(dtype, x));
        cl_mem yb = run.upload(kk::encode(dtype, y));
        cl_mem partial = run.scratch(batch * groups * sizeof(float));
        cl_mem out = run.scratch(out_bytes);
        if (batch > 0) {  // a zero-sized dimension is not a valid launch
            const auto n32 = static_cast<cl_uint>(n);
            const auto groups32 = static_cast<cl_uint>(groups);
            run.launch("dot_partial", {groups * ls, batch}, {ls, 1}, xb, yb, n32, partial);
            run.launch("dot_finish", {ls, batch}, {ls, 1}, partial, groups32, out);
        }
        return Output{kk::decode(dtype, run.read(out, out_bytes)), {}};
    };
    auto on_cpu = [&] {
        const auto xr = detail::rounded(dtype, x);
        const auto yr = detail::rounded(dtype, y);
        return Output{detail::to_values(dtype, kk::dot_reference(xr, yr, n, batch)), {}};
    };
    return dispatch<Output>(ctx.impl(), choice.request, on_device, on_cpu);
}

}  // namespace ops
