#pragma once
// Lets go of what the in-process rung kept for contexts their owners have
// released, off the caller's path: a thread of the cache's own releases the
// programs and the cache's context references (destroying a context costs
// 60 ms on NVIDIA's driver), and sweeps by itself every `period` while
// contexts are kept, so a released context's memory goes back within about a
// second even when no further request comes.
//
// The thread runs at the lowest CPU priority (nice 19): on a machine whose
// cores are busy with requests, teardown waits for a free core instead of
// slowing them (a releaser at normal priority was measured 11-20x slower
// for concurrent requests on a loaded 2-core machine with PoCL). Memory stays
// bounded: when kMaxPendingContexts contexts already wait for the thread,
// the caller releases what it hands over itself, as it did before there was
// a thread (a loop that drops contexts faster than they can be destroyed
// pays for destroying them, instead of piling them up).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "cl_util.hpp"
#include "kcache/common/serial_calls.hpp"

namespace kcache::service {

// What the cache lets go of, released after its lock is dropped (releasing a
// context's last program may destroy the context, and a driver may call back
// into the application then). Members are destroyed in reverse order: the
// programs first, then the cache's own references on their contexts.
// Released one at a time with the process's other program calls when a
// driver needs it (kcache/common/serial_calls.hpp).
struct Released {
    Released() = default;
    Released(Released&&) = default;
    Released& operator=(Released&&) = default;
    ~Released() {
        auto one_at_a_time = serial_calls::hold();
        programs.clear();
        contexts.clear();
    }
    std::vector<cl::ContextHandle> contexts;
    std::vector<ProgramRef> programs;
    bool empty() const { return contexts.empty() && programs.empty(); }
};

// Contexts waiting for the thread beyond which a caller releases in place.
inline constexpr std::size_t kMaxPendingContexts = 4;
// Periods with nothing to release or sweep after which the thread stops
// polling and sleeps, waking every kIdleWait to read the flag a load sets (a
// context kept since is swept within that wait: about a second).
inline constexpr int kIdlePolls = 8;
inline constexpr std::chrono::milliseconds kIdleWait{750};
// How long after the first hand_over the thread runs `on_start` (the user
// store's SQLite open): a process that closes its cache sooner (one that
// only hit hot copies) never opens SQLite, and hands its write-back over
// to the next process that does (the store's hot/handover.hpp).
inline constexpr std::chrono::milliseconds kOnStartDelay{250};

class Releaser {
  public:
    // Where releases run (KCACHE_RELEASER, read at construction).
    enum class Mode { low_priority, normal_priority, inline_release };
    // `sweep` moves what the cache no longer needs into its argument and
    // returns whether contexts are still kept (so sweeping goes on).
    using Sweep = std::function<bool(Released&)>;
    // `idle_wait`: how often a thread with nothing to do reads the flag.
    // `on_start` (may be empty) runs once on the thread kOnStartDelay after
    // the first hand_over, at its priority: background work that no caller waits for
    // (Cache::Impl's: starting the user store's SQLite open), kept off the thread of the first
    // load, which starts this one.
    Releaser(Sweep sweep, std::chrono::milliseconds period,
             std::chrono::milliseconds idle_wait = kIdleWait, std::function<void()> on_start = {});
    // Releases what was handed over and stops the thread.
    ~Releaser();
    Releaser(const Releaser&) = delete;
    Releaser& operator=(const Releaser&) = delete;

    // Queues `r` for release on the thread (started at the first call) and
    // has it sweep every period from now on while contexts are kept. `r` is
    // released in the calling thread only when kMaxPendingContexts contexts
    // are waiting already, or the thread cannot start. With nothing to
    // release, once the thread runs, this is one store to a flag the thread
    // reads: no lock and no wake-up on the caller's path (a wake-up there
    // made a caller that calls forget() 5-10 % slower on NVIDIA's driver).
    // The thread polls every period while contexts are kept or requests
    // come, and after kIdlePolls periods with nothing to do reads the flag
    // every kIdleWait instead.
    void hand_over(Released r) noexcept;
    // Starts the thread now, from the calling thread (Cache::open's head
    // start), so that the first load starts none; `on_start` still waits
    // for the first hand_over (a first hit beside SQLite's open was slower).
    void start_early() noexcept;

  private:
    void run();

    Sweep sweep_;
    std::function<void()> on_start_;
    const std::chrono::milliseconds period_;
    const std::chrono::milliseconds idle_wait_;
    std::mutex mu_;
    std::condition_variable wake_;
    std::vector<Released> queue_;
    bool sweeping_ = false;
    std::size_t pending_contexts_ = 0;  // in queue_ or being released
    // Set by every hand_over: the thread sweeps from then on (a sweep that
    // found nothing stops sweeping only if none came meanwhile).
    std::atomic<bool> poked_{false};
    bool polling_ = false;  // the thread wakes every period to read poked_ (under mu_)
    std::atomic<bool> thread_started_{false};  // thread_ runs (set once, under mu_)
    // Started early and no hand_over since (written under mu_): the next
    // hand_over wakes the thread, which runs `on_start` then.
    std::atomic<bool> awaiting_first_{false};
    bool stop_ = false;
    const Mode mode_;
    std::thread thread_;
};

}  // namespace kcache::service
