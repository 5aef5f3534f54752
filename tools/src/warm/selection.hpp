#pragma once
// Which kernel variants a command works on: all of them, or those chosen by
// `--kernels` (names or aliases) and `--dtypes`.

#include <string>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/kernels/registry.hpp"

namespace kcache::cli {

// Returns the variants of `kernels` (all kernels when empty) whose dtype is
// one of `dtypes` (any when empty; variants without a dtype are dropped when
// `dtypes` is given). Error: an unknown kernel or dtype, or an empty selection.
Result<std::vector<kernels::Variant>, std::string> select_variants(
    const std::vector<std::string>& kernels, const std::vector<std::string>& dtypes);

}  // namespace kcache::cli
