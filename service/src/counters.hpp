#pragma once
// The counters of one Cache: one atomic per row of
// <kcache/kcache_counters.def>, bumped by the rungs that answer and by the
// publish and compile steps; Cache::stats() copies them all into CacheStats,
// then sets the rows other parts keep (the store's sizes, the remote tier's
// counters, programs released). The cells are observe's CacheCounters, which
// the process's registry lists while the Cache lives and keeps the counts of
// after it closes: the metrics exposition's kcache_<field>_total families
// (docs/design.md, "Metrics and trace"). A new counter is its row and its
// bump.

#include <cstddef>
#include <cstdint>

#include "kcache/observe/counters.hpp"

namespace kcache::service {

enum class Counter : std::size_t {
#define KCACHE_COUNTER(field, frozen, source, doc) field,
#include "kcache/kcache_counters.def"
#undef KCACHE_COUNTER
};

inline constexpr std::size_t kCounterCount = metrics::kCounterRows;

class Counters {
  public:
    void bump(Counter c) noexcept { cells_.bump(static_cast<std::size_t>(c)); }
    std::uint64_t operator[](Counter c) const noexcept {
        return cells_[static_cast<std::size_t>(c)];
    }

  private:
    metrics::CacheCounters cells_;
};

}  // namespace kcache::service
