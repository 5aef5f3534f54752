#pragma once
// The layer's service: the process's one kcache Cache (opened at the first
// build of a program the application created from source), and what the layer reports
// about each program: a trace line (KCACHE_TRACE) and the counters file that
// `kcache stats` reads.

#include <string>
#include <string_view>

#include "kcache/kcache.hpp"

namespace kcache::layer {

// The process's cache while this object lives (opened at the first one),
// or null when it cannot open (the reason is logged once and the layer
// passes every call on) or has closed at exit, which it does not while one
// of these lives.
class CacheUse {
  public:
    CacheUse();
    ~CacheUse();
    CacheUse(const CacheUse&) = delete;
    CacheUse& operator=(const CacheUse&) = delete;
    Cache* get() const noexcept { return cache_; }

  private:
    Cache* cache_ = nullptr;
};

// How the layer answered a build.
enum class Verdict {
    hit,   // the cache had the binary (any rung above the JIT)
    jit,   // compiled now in the helper and stored
    fail,  // stopped by kcache (deadline, crash, failure record)
    pass,  // the driver built it (not handled, or not cacheable)
};

// Counts the build in the counters file and, when traced, writes one line:
// verdict, rung, key prefix, milliseconds, and `detail`.
void note(Verdict verdict, const Outcome* outcome, double ms, std::string_view detail);
inline void note_pass(std::string_view why) {
    note(Verdict::pass, nullptr, 0.0, why);
}

// The counters file of the store directory `dir`: one line `NAME COUNT` per
// verdict (hit, jit, fail, pass), updated under an exclusive lock by every
// process the layer runs in (every 16 builds and at exit). Returns its path
// for `kcache stats`.
std::string counters_path(const std::string& dir);

}  // namespace kcache::layer
