#pragma once
// Launch geometry the kernels expect (their argument lists are documented at
// the top of each kernels/cl/*.cl file and in kernels/README.md).

#include <cstddef>

namespace kcache::kernels {

// Most work-groups dot_partial uses per row; more adds little but pass-2 work.
inline constexpr std::size_t kDotMaxGroups = 256;

// Returns the number of work-groups per row for dot_partial: enough to give each
// item a few elements, at least 1 (so n == 0 still yields a 0 result).
std::size_t dot_groups(std::size_t n, std::size_t local_size);

// Returns `count` rounded up to a multiple of `local_size`, at least one group
// (kernels bound-check their index, so the padding items do nothing).
std::size_t padded_global_size(std::size_t count, std::size_t local_size);

}  // namespace kcache::kernels
