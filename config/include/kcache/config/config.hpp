#pragma once
// The configuration every front end resolves the same way: the environment
// (KCACHE_*), then the config file, then the defaults.

#include <string>

#include "kcache/kcache_types.hpp"

namespace kcache {
inline namespace core {

// Resolves the configuration; returns false and sets `error` (naming the
// variable or file:line) on a malformed value.
bool load_config(Config& out, std::string& error) noexcept;

}  // namespace core
}  // namespace kcache
