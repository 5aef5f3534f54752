#pragma once
// CPU references for every kernel and variant. Inputs are the element values
// as floats (already representable in the variant's element type, see
// round_to); results are computed in double and come with the magnitude of
// their terms so that tolerance() can judge a device result (numeric.hpp).
// Each kernel's reference is declared in its own header,
// kcache/kernels/<file>.hpp; this one declares the tolerance of a variant and
// includes the headers of conv2d, qconv_pointwise, dot and batchnorm (through
// launch.hpp), whose references it declared itself before they had their own.

#include "kcache/kernels/launch.hpp"
#include "kcache/kernels/numeric.hpp"
#include "kcache/kernels/registry.hpp"

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::kernels {

// Returns the tolerance results of `variant` are checked with: tolerance(dtype),
// widened for dot's native-half products (each rounded to half, 2^-11 relative),
// and all zero for the bit-exact qconv_pointwise; the errors of render otherwise.
Result<Tolerance, KernelError> variant_tolerance(const Variant& variant);

}  // namespace kcache::kernels

#pragma GCC visibility pop
