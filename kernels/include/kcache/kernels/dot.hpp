#pragma once
// dot (kernels/cl/dot.cl): its launch geometry and CPU reference.

#include <cstddef>
#include <span>
#include <vector>

#include "kcache/kernels/numeric.hpp"

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::kernels {

// Most work-groups dot_partial uses per row; more adds little but pass-2 work.
inline constexpr std::size_t kDotMaxGroups = 256;

// Returns the number of work-groups per row for dot_partial: enough to give each
// item a few elements, at least 1 (so n == 0 still yields a 0 result).
std::size_t dot_groups(std::size_t n, std::size_t local_size);

// Returns the `batch` dot products of rows of length `n` of `x` and `y` (row-major).
std::vector<RefValue> dot_reference(std::span<const float> x, std::span<const float> y,
                                    std::size_t n, std::size_t batch);

}  // namespace kcache::kernels

#pragma GCC visibility pop
