// The process's registry of caches' counters (counters.hpp): the caches open
// now, listed, and the counts of those closed, added as each closes. Both
// change under the registry's lock, and a reader sums under it, so a
// closing cache's counts are read once: in the list or in the closed totals.

#include "kcache/observe/counters.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "kcache/common/fork.hpp"
#include "kcache/observe/metrics.hpp"

namespace kcache::metrics {
namespace {

struct CounterRegistry {
    std::mutex mu;
    std::vector<const CacheCounters*> open;
    CounterTotals closed{};
};

// A forked child's own: the parent's may be locked by a thread the child
// does not have, and the parent's caches are never closed in the child.
CounterRegistry& counter_registry() {
    static fork_safety::PerProcess<CounterRegistry> per_process;
    return per_process.get();
}

}  // namespace

CacheCounters::CacheCounters() {
    CounterRegistry& r = counter_registry();
    std::lock_guard g(r.mu);
    r.open.push_back(this);
}

CacheCounters::~CacheCounters() {
    try {
        CounterRegistry& r = counter_registry();
        std::lock_guard g(r.mu);
        const auto it = std::find(r.open.begin(), r.open.end(), this);
        if (it == r.open.end()) {
            return;  // listed in another process's registry (made before a fork)
        }
        r.open.erase(it);
        for (std::size_t i = 0; i < kCounterRows; ++i) {
            r.closed[i] += (*this)[i];
        }
    } catch (...) {
        // Only a forked child's first use of the registry allocates; its
        // caches made before the fork are not in it.
    }
}

CounterTotals counter_totals() {
    CounterRegistry& r = counter_registry();
    std::lock_guard g(r.mu);
    CounterTotals sum = r.closed;
    for (const CacheCounters* c : r.open) {
        for (std::size_t i = 0; i < kCounterRows; ++i) {
            sum[i] += (*c)[i];
        }
    }
    return sum;
}

void snapshot_counters(CacheStats& out) {
    const CounterTotals sum = counter_totals();
    std::size_t row = 0;
#define KCACHE_COUNTER(field, frozen, source, doc)      \
    if (kCounterSources[row] == CounterSource::cache) { \
        out.field = sum[row];                           \
    }                                                   \
    ++row;
#include "kcache/kcache_counters.def"
#undef KCACHE_COUNTER
}

}  // namespace kcache::metrics
