#pragma once
// Small pieces every op shares: input checks, the rounding that makes both
// paths see the same element values, and kcache variant parameters.

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "ops/ops.hpp"

namespace ops::detail {

// Returns `error` with `what` and the actual and expected lengths.
Error size_mismatch(const std::string& what, std::size_t got, std::size_t want);

// Returns `values` rounded to `dtype`: what the device holds after encode().
std::vector<float> rounded(DType dtype, std::span<const float> values);

// Returns the reference results as values of `dtype` (the CPU path's output).
std::vector<float> to_values(DType dtype, const std::vector<kcache::kernels::RefValue>& refs);

// The "dtype" and "act" variant parameters.
std::map<std::string, std::string> variant_params(DType dtype, Activation act);

}  // namespace ops::detail
