// The in-process rung's releaser thread (see releaser.hpp).

#include "releaser.hpp"

#include <sys/resource.h>
#include <unistd.h>

namespace kcache::service {

Releaser::Releaser(Sweep sweep, std::chrono::milliseconds period)
    : sweep_(std::move(sweep)), period_(period) {}

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

void Releaser::hand_over(Released r) noexcept {
    bool wake = !r.empty();
    try {
        std::lock_guard g(mu_);
        if (!r.empty() && pending_contexts_ + r.contexts.size() <= kMaxPendingContexts) {
            const std::size_t contexts = r.contexts.size();
            queue_.push_back(std::move(r));
            pending_contexts_ += contexts;
        }
        wake = wake || !sweeping_;
        sweeping_ = true;
        handed_++;
        if (!thread_.joinable() && !stop_) {
            thread_ = std::thread([this] { run(); });
        }
    } catch (...) {
        // No memory or no thread: `r` (if still here) is released in place.
    }
    if (wake) {
        wake_.notify_one();
    }
}

void Releaser::run() {
    // Lowest priority for this thread alone (Linux: a thread id names one thread).
    (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19);
    std::unique_lock g(mu_);
    while (!stop_) {
        if (queue_.empty()) {
            if (sweeping_) {
                wake_.wait_for(g, period_);
            } else {
                wake_.wait(g);
            }
        }
        std::vector<Released> batch;
        batch.swap(queue_);
        const bool sweep = sweeping_ && !stop_;
        const std::uint64_t handed = handed_;
        g.unlock();
        std::size_t contexts = 0;
        for (const Released& r : batch) {
            contexts += r.contexts.size();
        }
        batch.clear();  // the releases, outside every lock
        bool kept = true;
        if (sweep) {
            Released swept;
            kept = sweep_(swept);
        }  // `swept` released here
        g.lock();
        pending_contexts_ -= contexts;
        if (!kept && handed == handed_) {
            sweeping_ = false;
        }
    }
}

}  // namespace kcache::service
