// Tolerance of a registry variant: the element type's, adjusted per kernel.

#include "kcache/kernels/reference.hpp"

namespace kcache::kernels {

Result<Tolerance, KernelError> variant_tolerance(const Variant& variant) {
    auto rendered = render(variant);
    if (!rendered)
        return fail(rendered.error());
    // qconv_pointwise accumulates in int32 (exact) and makes one f32 multiply:
    // f32 outputs allow 2 ulps (a driver whose multiply is off by one), int8
    // outputs none (round half to even of that product, which OpenCL C fixes).
    if (variant.kernel == "qconv_pointwise")
        return variant.get("out") == "f32" ? Tolerance{2, 0, 1e-30, 24} : Tolerance{0, 0, 0};
    const auto dtype = parse_dtype(variant.get("dtype"));
    if (!dtype) {
        return fail(KernelError{KernelErrc::invalid_value, variant.id() + " has no element type"});
    }
    Tolerance tol = tolerance(*dtype);
    if (variant.get("arith") == "f16")
        tol.accum_rel += 0x1p-11;
    return tol;
}

}  // namespace kcache::kernels
