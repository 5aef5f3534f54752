// The process-wide reaper: one detached thread that waits for children which
// were already sent SIGKILL, so that whoever killed them can return at once.
// A process image holds one reaper; a forked child starts afresh (the
// parent's thread does not exist there).

#include <pthread.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "kcache/compiler/subprocess.hpp"

namespace kcache::compiler {
namespace {

class Reaper {
  public:
    void adopt(ChildProcess child) {
        std::lock_guard lock(mu_);
        queue_.push_back(std::move(child));
        if (!started_) {
            started_ = true;
            std::thread([this] { loop(); }).detach();
        }
        cv_.notify_one();
    }

  private:
    [[noreturn]] void loop() {
        std::unique_lock lock(mu_);
        for (;;) {
            cv_.wait(lock, [this] { return !queue_.empty(); });
            ChildProcess child = std::move(queue_.front());
            queue_.pop_front();
            lock.unlock();
            (void)child.wait();  // kills what is left of the group, then reaps
            lock.lock();
        }
    }

    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<ChildProcess> queue_;
    bool started_ = false;
};

// Never destroyed: its thread may still run while static destructors do.
Reaper*& current() {
    static Reaper* reaper = [] {
        ::pthread_atfork(nullptr, nullptr, [] { current() = new Reaper; });
        return new Reaper;
    }();
    return reaper;
}

}  // namespace

void reap_later(ChildProcess child) {
    if (child.running()) {
        current()->adopt(std::move(child));
    }
}

}  // namespace kcache::compiler
