// Tolerance of a registry variant: the element type's, adjusted per kernel.

#include "kcache/kernels/reference.hpp"

namespace kcache::kernels {

Result<Tolerance, KernelError> variant_tolerance(const Variant& variant) {
    auto rendered = render(variant);
    if (!rendered)
        return fail(rendered.error());
    if (variant.kernel == "qconv_pointwise")
        return Tolerance{0, 0, 0};
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
