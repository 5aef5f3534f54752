#pragma once
// The types the header of every kernel names: the int4 argument layout and
// the fused activation of a variant.

#include <array>
#include <cstdint>

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::kernels {

// One int4 kernel argument: 16 bytes, the layout of an OpenCL int4.
using Int4 = std::array<std::int32_t, 4>;

// Fused activation of a variant ("act" parameter).
enum class Activation { none, relu };

}  // namespace kcache::kernels

#pragma GCC visibility pop
