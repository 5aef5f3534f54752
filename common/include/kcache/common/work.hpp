#pragma once
// Counts of the work kcache's own code does in this process: files its
// readers open, bytes they read, JSON documents parsed, random draws. Tests
// read them to hold a request's path to a budget of work (docs/design.md,
// "The hit path's budget"), so a change that adds a read or a parse to a hit
// fails a test instead of slowing every hit unnoticed. Not part of the C
// API. Each count is one relaxed atomic add: cheap enough to stay on in
// every build.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace kcache::work {

// The counted items, in one list (name, what one unit is).
#define KCACHE_WORK_ITEMS(X)                                                              \
    X(files_opened, "an open of a file by kcache's readers, found or not (SQLite's too)") \
    X(bytes_read, "a byte read by kcache's readers (not SQLite's own reads)")             \
    X(json_parsed, "a JSON document parsed")                                              \
    X(random_draws, "a draw of fresh randomness (OpenSSL, std::random_device)")

enum class Item : std::size_t {
#define KCACHE_WORK_ENUM(name, what) name,
    KCACHE_WORK_ITEMS(KCACHE_WORK_ENUM)
#undef KCACHE_WORK_ENUM
};

inline constexpr std::size_t kItems = 0
#define KCACHE_WORK_ONE(name, what) +1
    KCACHE_WORK_ITEMS(KCACHE_WORK_ONE)
#undef KCACHE_WORK_ONE
    ;

// Each item's name, as the enumerator reads.
inline constexpr std::array<const char*, kItems> kNames = {
#define KCACHE_WORK_NAME(name, what) #name,
    KCACHE_WORK_ITEMS(KCACHE_WORK_NAME)
#undef KCACHE_WORK_NAME
};

// The process's counts (one copy per linked image: a test reads the one of
// the code it links).
inline std::array<std::atomic<std::uint64_t>, kItems> g_counts{};

// Adds `n` to `item`'s count.
inline void add(Item item, std::uint64_t n = 1) noexcept {
    g_counts[static_cast<std::size_t>(item)].fetch_add(n, std::memory_order_relaxed);
}

// Every count now, indexed by Item.
using Snapshot = std::array<std::uint64_t, kItems>;
inline Snapshot snapshot() noexcept {
    Snapshot s{};
    for (std::size_t i = 0; i < kItems; ++i) {
        s[i] = g_counts[i].load(std::memory_order_relaxed);
    }
    return s;
}

}  // namespace kcache::work
