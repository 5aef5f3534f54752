#pragma once
// The process counters of one Cache (CacheStats), bumped by the rungs that
// answer and by the publish step.

#include <atomic>
#include <cstdint>

namespace kcache::service {

struct Counters {
    std::atomic<std::uint64_t> in_process{0}, store{0}, pack{0}, aot{0}, failure{0};
    std::atomic<std::uint64_t> jit_compiles{0}, jit_failures{0};
    std::atomic<std::uint64_t> warmed_later{0};  // stored binaries replaced by their warmed build
    std::atomic<std::uint64_t> resident{0};      // binaries loaded from ResidentBytes
    std::atomic<std::uint64_t> store_write_failures{0};  // see CacheStats
};

}  // namespace kcache::service
