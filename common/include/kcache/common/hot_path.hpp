#pragma once
// The code of a hit in a context the cache has not seen (the request's way
// down to a load of bytes it already holds) lives in one section,
// `kcache_hot_path`. Such a hit comes right after the application made its
// context, which on a GPU driver leaves the CPU's caches cold: the hit then
// waits on one memory read after another as it runs into code it has not
// touched. prefetch_hot_path() asks for all of that code at once at the start
// of a request, so the reads overlap instead of queueing (bench/README.md
// has the figures).

#include <cstddef>
#include <cstdint>

// Marks a function of that path (hot, and placed in the section).
#define KCACHE_HOT_PATH [[gnu::hot, gnu::section("kcache_hot_path")]]

// The linker's bounds of the section (null where nothing was placed in it).
extern "C" {
extern const char __start_kcache_hot_path[] __attribute__((weak, visibility("hidden")));
extern const char __stop_kcache_hot_path[] __attribute__((weak, visibility("hidden")));
}

namespace kcache {

// Starts reading the section's code into the CPU's second-level cache; no
// wait, no effect on what runs.
inline void prefetch_hot_path() noexcept {
    // As integers: the bounds are two distinct objects to the compiler, which
    // may drop a loop comparing pointers to them.
    auto p = reinterpret_cast<std::uintptr_t>(__start_kcache_hot_path);
    const auto end = reinterpret_cast<std::uintptr_t>(__stop_kcache_hot_path);
    if (p == 0 || end <= p) {
        return;
    }
    for (; p < end; p += 64) {
        __builtin_prefetch(reinterpret_cast<const void*>(p), 0, 2);
    }
}

// Starts reading the `bytes` bytes at `p` (an object the request reads) into
// the CPU's caches, as prefetch_hot_path() does with the code.
inline void prefetch_lines(const void* p, std::size_t bytes) noexcept {
    const char* c = static_cast<const char*>(p);
    for (std::size_t off = 0; off < bytes; off += 64) {
        __builtin_prefetch(c + off, 0, 3);
    }
}

}  // namespace kcache
