#pragma once
// Launch geometry the kernels expect (their argument lists are documented at
// the top of each kernels/cl/*.cl file and in kernels/README.md). Each
// kernel's shape and geometry are in its own header, kcache/kernels/<file>.hpp
// after its kernels/cl/<file>.cl; this one declares what they share and
// includes the headers of conv2d, qconv_pointwise, dot and batchnorm, which
// it declared itself before they had their own (a later kernel's callers
// include its header).

#include <cstddef>

#include "kcache/kernels/batchnorm.hpp"
#include "kcache/kernels/conv2d.hpp"
#include "kcache/kernels/dot.hpp"
#include "kcache/kernels/qconv.hpp"
#include "kcache/kernels/types.hpp"

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::kernels {

// Returns `count` rounded up to a multiple of `local_size`, at least one group
// (kernels bound-check their index, so the padding items do nothing).
std::size_t padded_global_size(std::size_t count, std::size_t local_size);

}  // namespace kcache::kernels

#pragma GCC visibility pop
