#pragma once
// The layer's service: the process's one kcache Cache, and what the layer
// reports about each program: a trace line (KCACHE_TRACE) and the counters
// file that `kcache stats` reads. The cache starts opening on a thread of
// the layer's own when the application looks for platforms, creates a
// context or a program from source, and the first build that needs it waits
// for it (or opens it, when the thread has not begun).

#include <string>
#include <string_view>

#include "kcache/kcache.hpp"

namespace kcache::layer {

// Starts opening the process's cache on a thread of its own, unless that
// is under way or done (or the calling thread is kcache's own). The thread
// loads the configuration and opens the cache if its directory exists; a
// store not made yet is made by the first build, so an application that
// never builds leaves none. Exit and fork() wait for the thread.
void open_early() noexcept;

// Hands `count` devices of a context the application created to the
// layer's thread (starting one if none runs), which learns what their
// requests need of them (Cache::prepare: the probe's driver queries) after
// the opening, so that their first builds need not; each retained until
// then, and each handed over once. kcache's own contexts are not.
void prepare_early(const cl_device_id* devices, cl_uint count) noexcept;

// The process's cache while this object lives (opened, or waited for, at
// the first one), or null when it cannot open (the reason is logged once and
// the layer passes every call on) or has closed at exit, which it does not
// while one of these lives.
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
// Whether note() writes lines (the cache opened with KCACHE_TRACE): a detail
// only the line shows need not be made otherwise.
bool traced();
inline void note_pass(std::string_view why) {
    note(Verdict::pass, nullptr, 0.0, why);
}

// Where the layer keeps the manifests of programs' includes (the store's
// `layer-includes/`), or "" when it keeps none (a read-only or disabled
// cache, or none open).
const std::string& includes_dir() noexcept;

// The counters file of the store directory `dir`: one line `NAME COUNT` per
// verdict (hit, jit, fail, pass), updated under an exclusive lock by every
// process the layer runs in (every 16 builds and at exit). Returns its path
// for `kcache stats`.
std::string counters_path(const std::string& dir);

}  // namespace kcache::layer
