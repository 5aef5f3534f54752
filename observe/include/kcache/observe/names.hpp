#pragma once
// The names of the public enumerators (kcache/kcache_types.hpp) as traces,
// metrics, the CLI and the C API print them.

#include "kcache/kcache_types.hpp"

namespace kcache {
inline namespace core {

// Returns the enumerator's name ("ok", "user_store", …).
const char* to_string(StatusCode s) noexcept;
const char* to_string(Rung r) noexcept;
const char* to_string(Mode m) noexcept;
const char* to_string(MissCause c) noexcept;
const char* to_string(Source s) noexcept;

}  // namespace core
}  // namespace kcache
