#pragma once
// The counters of a cache, by row of <kcache/kcache_counters.def>, and the
// process's totals of them (docs/design.md, "Metrics and trace"). Each Cache
// owns one CacheCounters (service/src/counters.hpp names its rows); it is
// listed in a registry of the process from its construction and, when it
// goes, its counts are added to the totals of caches closed, so the totals
// only grow. A bump is the cache's own relaxed atomic add, as before there
// was a registry: the registry is touched only when a cache opens or closes
// and when the totals are read.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace kcache::metrics {

// Who keeps a row's figure (the .def's `source` column).
enum class CounterSource : std::uint8_t { store, cache, part };

inline constexpr std::size_t kCounterRows = 0
#define KCACHE_COUNTER(field, frozen, source, doc) +1
#include "kcache/kcache_counters.def"
#undef KCACHE_COUNTER
    ;

// The source of every row, by index.
inline constexpr std::array<CounterSource, kCounterRows> kCounterSources = {
#define KCACHE_COUNTER(field, frozen, source, doc) CounterSource::source,
#include "kcache/kcache_counters.def"
#undef KCACHE_COUNTER
};

using CounterTotals = std::array<std::uint64_t, kCounterRows>;

// One cache's counters, registered with the process for as long as it lives.
class CacheCounters {
  public:
    CacheCounters();
    ~CacheCounters();
    CacheCounters(const CacheCounters&) = delete;
    CacheCounters& operator=(const CacheCounters&) = delete;

    void bump(std::size_t row) noexcept { cells_[row].fetch_add(1, std::memory_order_relaxed); }
    std::uint64_t operator[](std::size_t row) const noexcept {
        return cells_[row].load(std::memory_order_relaxed);
    }

  private:
    std::array<std::atomic<std::uint64_t>, kCounterRows> cells_{};
};

// Every row summed over the caches this process opened: those open now and
// those closed. A forked child starts from zero (its own registry).
CounterTotals counter_totals();

}  // namespace kcache::metrics
