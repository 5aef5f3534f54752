// Launch geometry every kernel shares.

#include "kcache/kernels/launch.hpp"

#include <algorithm>

namespace kcache::kernels {

std::size_t padded_global_size(std::size_t count, std::size_t local_size) {
    const std::size_t groups = std::max<std::size_t>(1, (count + local_size - 1) / local_size);
    return groups * local_size;
}

}  // namespace kcache::kernels
