// Threads joined when the cache closes (workers.hpp).

#include "kcache/common/workers.hpp"

#include <algorithm>
#include <system_error>

namespace kcache {

Workers::~Workers() {
    stop_starting();
    join_all();
}

bool Workers::start(std::function<void()>& work) {
    std::lock_guard g(mu_);
    if (closing_) {
        return false;
    }
    if (idle_ > queue_.size()) {  // an idle thread takes it
        queue_.push_back(std::move(work));
        wake_.notify_one();
        return true;
    }
    workers_.remove_if([](Worker& w) {  // join ended ones
        if (!w.ended) {
            return false;
        }
        w.thread.join();
        return true;
    });
    workers_.emplace_back();
    Worker* self = &workers_.back();
    self->first = std::move(work);
    try {
        self->thread = std::thread([this, self] { run(self); });
    } catch (const std::system_error&) {
        work = std::move(self->first);  // no thread: the caller does the work itself
        workers_.pop_back();
        return false;
    }
    ++started_;
    return true;
}

bool Workers::queue(std::function<void()>& work) {
    std::lock_guard g(mu_);
    const bool running =
        std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return !w.ended; });
    if (closing_ || !running) {
        return false;
    }
    queue_.push_back(std::move(work));  // taken when it is done, or now if idle
    wake_.notify_one();
    return true;
}

void Workers::run(Worker* self) {
    std::unique_lock g(mu_);
    std::function<void()> work = std::move(self->first);
    for (;;) {
        g.unlock();
        work();
        work = nullptr;  // what it captured goes before the wait
        g.lock();
        ++idle_;
        wake_.wait_for(g, linger_, [this] { return closing_ || !queue_.empty(); });
        --idle_;
        if (queue_.empty()) {
            self->ended = true;
            return;
        }
        work = std::move(queue_.front());
        queue_.pop_front();
    }
}

void Workers::stop_starting() {
    std::lock_guard g(mu_);
    closing_ = true;
    wake_.notify_all();
}

void Workers::join_all() {
    std::list<Worker> joining;
    {
        std::lock_guard g(mu_);
        joining.swap(workers_);
    }
    for (auto& w : joining) {
        if (w.thread.joinable()) {
            w.thread.join();
        }
    }
}

std::size_t Workers::threads_started() const {
    std::lock_guard g(mu_);
    return started_;
}

std::size_t Workers::idle_threads() const {
    std::lock_guard g(mu_);
    return idle_;
}

}  // namespace kcache
