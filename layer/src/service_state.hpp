#pragma once
// What the layer's service (service.cpp: the opening, the exit, the reports)
// and its thread (early.cpp: opening early, preparing devices, fork) share:
// the process's one State.

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "counters_file.hpp"
#include "kcache/kcache.hpp"

namespace kcache::layer {

// The opening of the cache (open_early, ensure_open): `phase` and `opener`
// are guarded by `open_mutex`; what the opening sets (cache, live, opened,
// owner, counters, trace, deferred) is written by the one thread that
// claimed it, the opening thread or a build, and read by others after
// `done` or `ready`.
enum class Phase { idle, started };

struct State {
    std::unique_ptr<Cache> cache;       // owns it until it closes at exit
    std::atomic<Cache*> live{nullptr};  // what requests use; null once closed
    std::atomic<int> in_flight{0};      // CacheUse objects alive
    bool opened = false;                // the cache opened (else all passes through)
    pid_t owner = 0;                    // the process that opened it
    std::string counters;               // the counters file ("" when none is written)
    std::string includes;               // the include manifests' directory ("": none)
    bool trace = false;
    std::mutex pending_mutex;
    Counts pending{};  // verdicts not yet in the counters file
    unsigned long long pending_total = 0;
    std::array<std::atomic<bool>, kVerdictNames.size()> close_registered{};

    std::mutex open_mutex;
    Phase phase = Phase::idle;
    std::thread opener;                // the opening thread, until joined
    std::atomic<bool> claimed{false};  // the opening is taken (by the thread or a build)
    std::atomic<bool> done{false};     // the thread's opening is done
    std::optional<Config> deferred;    // loaded early, its store not made yet
    std::atomic<bool> ready{false};    // opened, or known not to open

    // Devices of new contexts for the opening thread to prepare (learn)
    // after the opening, each retained until then; `preparing`: a thread
    // will take them. Guarded by `prepare_mutex` (taken after open_mutex).
    std::mutex prepare_mutex;
    std::vector<cl_device_id> to_prepare;
    bool preparing = false;
    std::unordered_set<cl_device_id> handed;  // every device handed over so far
};

// Most device handles kept in State::handed: past it, a device is handed
// over again at every context (sub-devices come and go; roots are few).
constexpr std::size_t kMaxHanded = 256;

// The process's State (made at the first call, left to exit).
State& state();

// Set on the layer's thread: it never waits for itself.
extern thread_local bool t_opener;

// The opening thread's work: the configuration, then the cache (service.cpp).
void open_in_background(State& s);
// Joins the layer's thread unless it is the caller; caller holds `s.open_mutex`.
void join_opener_locked(State& s);
// At exit: the counters flushed and the cache closed (service.cpp).
void close_at_exit();

}  // namespace kcache::layer
