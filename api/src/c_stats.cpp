// The C API's counters: by index (every row of kcache_counters.def, the
// requests by rung and status, the histograms; CacheStats's for_each_stat
// gives their order and names) and the frozen kcache_stats view.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "c_api_support.hpp"
#include "kcache/kcache.h"

using kcache::c_api::escaped;
using kcache::c_api::invalid;
using kcache::c_api::report;

namespace {

static_assert(KCACHE_LATENCY_BUCKETS == kcache::kLatencyBuckets &&
              KCACHE_RUNG_COUNT == kcache::kRungCount &&
              KCACHE_STATUS_COUNT == kcache::kFrozenStatusCount);

// The names by index, made once (for_each_stat's order is fixed at build).
const std::vector<std::string>& names() {
    static const std::vector<std::string>* all = [] {
        auto* v = new std::vector<std::string>;
        const kcache::CacheStats none;
        kcache::for_each_stat(
            none, [v](std::string name, std::uint64_t) { v->push_back(std::move(name)); });
        return v;
    }();
    return *all;
}

void copy_histogram(const kcache::LatencyHistogram& from, kcache_histogram& to) {
    to.count = from.count;
    to.sum_ns = from.sum_ns;
    std::copy(from.buckets.begin(), from.buckets.end(), std::begin(to.buckets));
}

// `s` as the frozen struct: the rows marked frozen, the histograms and the
// statuses it has a column of.
kcache_stats frozen_of(const kcache::CacheStats& s) {
    kcache_stats f = KCACHE_STATS_INIT;
#define KCACHE_FROZEN_1(field) f.field = s.field;
#define KCACHE_FROZEN_0(field)
#define KCACHE_COUNTER(field, frozen, source, doc) KCACHE_FROZEN_##frozen(field)
#include "kcache/kcache_counters.def"
#undef KCACHE_COUNTER
#undef KCACHE_FROZEN_0
#undef KCACHE_FROZEN_1
    copy_histogram(s.request, f.request_latency);
    for (std::size_t r = 0; r < KCACHE_RUNG_COUNT; ++r) {
        copy_histogram(s.answered[r], f.answered_latency[r]);
        std::copy_n(s.requests[r].begin(), KCACHE_STATUS_COUNT, std::begin(f.requests[r]));
    }
    copy_histogram(s.compile, f.compile_latency);
    copy_histogram(s.load, f.load_latency);
    copy_histogram(s.remote_get, f.remote_get_latency);
    copy_histogram(s.remote_put, f.remote_put_latency);
    return f;
}

}  // namespace

size_t kcache_stat_count(void) {
    try {
        return names().size();
    } catch (...) {
        return 0;
    }
}

const char* kcache_stat_name(size_t index) {
    try {
        return index < names().size() ? names()[index].c_str() : nullptr;
    } catch (...) {
        return nullptr;
    }
}

kcache_status kcache_stat_values(kcache_cache* cache, uint64_t* values, size_t capacity,
                                 size_t* count) try {
    if (cache == nullptr || (values == nullptr && capacity > 0)) {
        return invalid("kcache_stat_values: cache must not be NULL, nor values with a capacity");
    }
    const kcache::CacheStats s = cache->cache->stats();
    std::size_t i = 0;
    kcache::for_each_stat(s, [&](const std::string&, std::uint64_t v) {
        if (i < capacity) {
            values[i] = v;
        }
        ++i;
    });
    if (count != nullptr) {
        *count = i;
    }
    return report(kcache::StatusCode::ok, "");
} catch (...) {
    return escaped("kcache_stat_values");
}

kcache_status kcache_get_stats(kcache_cache* cache, kcache_stats* out) try {
    if (cache == nullptr || out == nullptr) {
        return invalid("kcache_get_stats: cache and out must not be NULL");
    }
    if (out->struct_size < KCACHE_END(kcache_stats, struct_size)) {
        return invalid("kcache_get_stats: set out->struct_size (KCACHE_STATS_INIT)");
    }
    const kcache_stats all = frozen_of(cache->cache->stats());
    // Everything after struct_size is uint64_t, in declaration order (the
    // histograms and the request table too); copy what the caller has room for.
    constexpr std::size_t first = offsetof(kcache_stats, entries);
    const std::size_t room = (std::min(out->struct_size, sizeof all) - first) / sizeof(uint64_t);
    std::memcpy(&out->entries, &all.entries, room * sizeof(uint64_t));
    return report(kcache::StatusCode::ok, "");
} catch (...) {
    return escaped("kcache_get_stats");
}
