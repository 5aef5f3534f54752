#pragma once
// Threads that outlive the request that started them (a compile, a remote
// hit's backfill into the user store), joined when the cache closes so that
// a short-lived process such as `kcache warm` finishes what it started.

#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace kcache {

class Workers {
  public:
    Workers() = default;
    // Joins what is left (close() normally did).
    ~Workers();
    Workers(const Workers&) = delete;
    Workers& operator=(const Workers&) = delete;

    // Runs `work` on a thread of its own. False once closing began or when
    // no thread can start: then `work` is left to the caller, who runs it
    // itself. Joins finished threads on the way.
    bool start(std::function<void()>& work);
    // Refuses later start() calls; threads already started go on.
    void stop_starting();
    // Joins every thread started (after stop_starting(): none comes later).
    void join_all();

  private:
    struct Worker {
        std::thread thread;
        std::shared_future<void> done;
    };
    std::mutex mu_;  // guards everything below
    std::vector<Worker> workers_;
    bool closing_ = false;
};

}  // namespace kcache
