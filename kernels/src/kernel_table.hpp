#pragma once
// The built-in kernel table and the options every variant is built with.
// Each kernel's row is in its own file: kernels/src/<file>.cpp, after its
// kernels/cl/<file>.cl, defines <file>_kernel(); kernel_list.def (generated
// by kernels/CMakeLists.txt from kernels/cl/*.cl) names those files.

#include <vector>

#include "kcache/kernels/registry.hpp"

namespace kcache::kernels::detail {

// Options in front of every variant's own: the language version the sources target.
inline constexpr std::string_view kBaseOptions = "-cl-std=CL1.2";

// The embedded file rendered in front of every kernel source.
inline constexpr std::string_view kPreludeFile = "prelude.cl";

// The parameters several kernels offer (the first value of a parameter is its
// default): the element type, the fused activation, and the local sizes in
// `sizes`, most preferred first.
Param dtype_param();
Param activation_param();
Param local_size_param(std::vector<int> sizes);

// Returns the registry's description of the kernel of one kernels/cl file.
#define KCACHE_KERNEL(file) KernelInfo file##_kernel();
#include "kernel_list.def"
#undef KCACHE_KERNEL

// Returns the table of built-in kernels.
std::vector<KernelInfo> builtin_kernels();

}  // namespace kcache::kernels::detail
