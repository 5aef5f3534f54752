#pragma once
// The memory a hot copy's bytes are read into (hot_copies.cpp).

#include <cstddef>

#include "kcache/store/types.hpp"

namespace kcache::store::hot {

// Returns `n` zero bytes, their pages populated in one call when they are
// not resident yet (see hot_buffer.cpp).
Bytes hot_buffer(std::size_t n);

}  // namespace kcache::store::hot
