#pragma once
// The launcher of conv2d (kernels/cl/conv2d.cl): the direct or the 1×1
// pointwise path.

#include "kcache/cl/launch_target.hpp"
#include "kcache/kernels/conv2d.hpp"

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::cl {

// conv2d: x [N][C][H][W], w [K][C/groups][R][S], bias [K] (nullptr: none), y [N][K][OH][OW].
struct Conv2dBuffers {
    cl_mem x = nullptr, w = nullptr, bias = nullptr, y = nullptr;
};
// Enqueues conv2d_pointwise when kernels::conv2d_is_pointwise(shape), else
// conv2d_direct; CL_INVALID_VALUE when `shape` is not valid().
Launched launch_conv2d(const LaunchTarget& target, const kernels::Conv2dShape& shape,
                       const Conv2dBuffers& buffers);

}  // namespace kcache::cl

#pragma GCC visibility pop
