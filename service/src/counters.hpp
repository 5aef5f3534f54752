#pragma once
// The process counters of one Cache: one atomic per row of
// <kcache/kcache_counters.def>, bumped by the rungs that answer and by the
// publish and compile steps; Cache::stats() copies them all into CacheStats,
// then sets the rows other parts keep (the store's sizes, the remote tier's
// counters, programs released). A new counter is its row and its bump.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace kcache::service {

enum class Counter : std::size_t {
#define KCACHE_COUNTER(field, frozen, doc) field,
#include "kcache/kcache_counters.def"
#undef KCACHE_COUNTER
};

inline constexpr std::size_t kCounterCount = 0
#define KCACHE_COUNTER(field, frozen, doc) +1
#include "kcache/kcache_counters.def"
#undef KCACHE_COUNTER
    ;

class Counters {
  public:
    void bump(Counter c) noexcept { at(c).fetch_add(1, std::memory_order_relaxed); }
    std::uint64_t operator[](Counter c) const noexcept {
        return values_[static_cast<std::size_t>(c)].load(std::memory_order_relaxed);
    }

  private:
    std::atomic<std::uint64_t>& at(Counter c) noexcept {
        return values_[static_cast<std::size_t>(c)];
    }
    std::array<std::atomic<std::uint64_t>, kCounterCount> values_{};
};

}  // namespace kcache::service
