#pragma once
// The launcher of dot (kernels/cl/dot.cl): dot_partial then dot_finish.

#include <cstddef>

#include "kcache/cl/launch_target.hpp"
#include "kcache/kernels/dot.hpp"

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::cl {

// dot: rows of `n` elements of x and y, `rows` results in out. `partial`
// holds dot_partial_bytes(n, rows, local_size) bytes of scratch.
struct DotBuffers {
    cl_mem x = nullptr, y = nullptr, partial = nullptr, out = nullptr;
};
// Returns the size in bytes of dot's scratch buffer (at least 1).
std::size_t dot_partial_bytes(std::size_t n, std::size_t rows, std::size_t local_size) noexcept;
// Enqueues dot_partial then dot_finish; an error when n or rows exceeds 32 bits.
Launched launch_dot(const LaunchTarget& target, std::size_t n, std::size_t rows,
                    const DotBuffers& buffers);

}  // namespace kcache::cl

#pragma GCC visibility pop
