#pragma once
// The built-in kernel table (data; see kernel_table.cpp) and the options every
// variant is built with.

#include <vector>

#include "kcache/kernels/registry.hpp"

namespace kcache::kernels::detail {

// Options in front of every variant's own: the language version the sources target.
inline constexpr std::string_view kBaseOptions = "-cl-std=CL1.2";

// The embedded file rendered in front of every kernel source.
inline constexpr std::string_view kPreludeFile = "prelude.cl";

// Returns the table of built-in kernels.
std::vector<KernelInfo> builtin_kernels();

}  // namespace kcache::kernels::detail
