// The in-process rung's releaser thread (see releaser.hpp).

#include "releaser.hpp"
#include "kcache/common/hot_path.hpp"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace kcache::service {
namespace {

// KCACHE_RELEASER (a diagnostic setting, docs/design.md "Context teardown"):
// "inline" releases in the caller's thread as kcache did before it had a
// thread; "normal" runs the thread at normal priority; anything else, the
// thread at nice 19.
Releaser::Mode mode_from_environment() {
    const char* v = std::getenv("KCACHE_RELEASER");
    const std::string_view mode = v != nullptr ? v : "";
    if (mode == "inline") {
        return Releaser::Mode::inline_release;
    }
    return mode == "normal" ? Releaser::Mode::normal_priority : Releaser::Mode::low_priority;
}

}  // namespace

Releaser::Releaser(Sweep sweep, std::chrono::milliseconds period,
                   std::chrono::milliseconds idle_wait, std::function<void()> on_start)
    : sweep_(std::move(sweep)),
      on_start_(std::move(on_start)),
      period_(period),
      idle_wait_(idle_wait),
      mode_(mode_from_environment()) {}

Releaser::~Releaser() {
    {
        std::lock_guard g(mu_);
        stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
    queue_.clear();  // anything queued after the thread left
}

KCACHE_HOT_PATH void Releaser::hand_over(Released r) noexcept {
    if (mode_ == Mode::inline_release) {
        return;  // `r` is released here
    }
    // The thread reads the flag at its next wake-up, whenever that comes (it
    // never sleeps without a timeout, but before the first hand_over after
    // start_early(), which wakes it below): no ordering beyond release is
    // needed.
    poked_.store(true, std::memory_order_release);
    if (r.empty() && thread_started_.load(std::memory_order_acquire) &&
        !awaiting_first_.load(std::memory_order_relaxed)) {
        // The thread reads the flag within a period while it polls, within
        // kIdleWait while it sleeps: no wake-up (a system call, and a sweep
        // beside the request) on the caller's path.
        return;
    }
    try {
        std::lock_guard g(mu_);
        if (!r.empty() && pending_contexts_ + r.contexts.size() <= kMaxPendingContexts) {
            const std::size_t contexts = r.contexts.size();
            queue_.push_back(std::move(r));
            pending_contexts_ += contexts;
        }
        if (!thread_.joinable() && !stop_) {
            polling_ = true;
            thread_ = std::thread([this] { run(); });
            thread_started_.store(true, std::memory_order_release);
        } else if (awaiting_first_.load(std::memory_order_relaxed)) {
            awaiting_first_.store(false, std::memory_order_relaxed);
            polling_ = true;
        }
    } catch (...) {
        // No memory or no thread: `r` (if still here) is released in place.
    }
    wake_.notify_one();
}

void Releaser::start_early() noexcept {
    if (mode_ == Mode::inline_release) {
        return;
    }
    try {
        std::lock_guard g(mu_);
        if (thread_.joinable() || stop_) {
            return;
        }
        awaiting_first_.store(true, std::memory_order_relaxed);
        thread_ = std::thread([this] { run(); });
        thread_started_.store(true, std::memory_order_release);
    } catch (...) {
        awaiting_first_.store(false, std::memory_order_relaxed);  // the first load starts it
    }
}

void Releaser::run() {
    // Lowest priority for this thread alone (Linux: a thread id names one thread).
    if (mode_ == Mode::low_priority) {
        (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19);
    }
    std::unique_lock g(mu_);
    // Started early: nothing until the first hand_over (or the close).
    wake_.wait(g, [this] { return stop_ || !awaiting_first_.load(std::memory_order_relaxed); });
    // `on_start` once kOnStartDelay has passed since: a cache closed sooner
    // never runs it.
    const auto start_at = std::chrono::steady_clock::now() + kOnStartDelay;
    bool started = !on_start_;
    int idle = 0;  // periods in a row with nothing to release or sweep
    while (!stop_) {
        if (!started && std::chrono::steady_clock::now() >= start_at) {
            started = true;
            g.unlock();
            on_start_();  // outside the lock: hand_over never waits for it
            g.lock();
            continue;
        }
        const auto until_start = started ? std::chrono::steady_clock::duration::max()
                                         : start_at - std::chrono::steady_clock::now();
        if (queue_.empty() && polling_) {
            wake_.wait_for(g, std::min<std::chrono::steady_clock::duration>(period_, until_start));
        } else if (queue_.empty()) {
            // Asleep: woken by work handed over or the cache closing; a flag
            // set by a load is read every idle_wait_.
            wake_.wait_for(g,
                           std::min<std::chrono::steady_clock::duration>(idle_wait_, until_start),
                           [this] { return stop_ || !queue_.empty(); });
        }
        std::vector<Released> batch;
        batch.swap(queue_);
        if (poked_.exchange(false)) {
            sweeping_ = true;
            polling_ = true;
        }
        const bool sweep = sweeping_ && !stop_;
        g.unlock();
        std::size_t contexts = 0;
        for (const Released& r : batch) {
            contexts += r.contexts.size();
        }
        bool released = !batch.empty();
        batch.clear();  // the releases, outside every lock
        bool kept = true;
        if (sweep) {
            Released swept;
            kept = sweep_(swept);
            released = released || !swept.empty();
        }  // `swept` released here
        if (released) {
            // A driver frees much of a context's memory in this thread, into
            // this thread's own allocator arena, which the C library does not
            // give back by itself: the process would keep growing by what
            // the driver used per context (measured on NVIDIA's driver:
            // 186 KiB a context; PoCL: 6-10 KiB).
            ::malloc_trim(0);
        }
        g.lock();
        pending_contexts_ -= contexts;
        if (!kept && !poked_.load()) {
            sweeping_ = false;
        }
        idle = sweeping_ || released ? 0 : idle + 1;
        if (idle >= kIdlePolls && !poked_.load()) {
            polling_ = false;  // a load since: polls on
        }
    }
}

}  // namespace kcache::service
