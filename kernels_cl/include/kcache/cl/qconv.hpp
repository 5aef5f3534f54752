#pragma once
// The launcher of qconv_pointwise (kernels/cl/qconv.cl).

#include <cstdint>

#include "kcache/cl/launch_target.hpp"
#include "kcache/kernels/qconv.hpp"

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::cl {

// qconv_pointwise: int8 x [N][C][HW] and w [K][C]; int32 bias [K] (nullptr:
// none); f32 scale [K]; int32 zero_point [K]; y [N][K][HW] as f32 or int8 per variant.
struct QconvBuffers {
    cl_mem x = nullptr, w = nullptr, bias = nullptr, scale = nullptr, zero_point = nullptr,
           y = nullptr;
    std::int32_t x_zero_point = 0;
};
// Enqueues qconv_pointwise; CL_INVALID_VALUE for a negative dimension.
Launched launch_qconv_pointwise(const LaunchTarget& target, const kernels::QconvShape& shape,
                                const QconvBuffers& buffers);

}  // namespace kcache::cl

#pragma GCC visibility pop
