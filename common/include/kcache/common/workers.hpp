#pragma once
// Threads that outlive the request that started them (a compile, a remote
// hit's backfill into the user store, the gates after an answer, the
// opener's head start), joined when the cache closes so that a short-lived
// process such as `kcache warm` finishes what it started.
//
// A thread whose work is done waits up to `linger` for the next start()
// before it ends, so that work handed over soon after (a first hit's gates,
// right after the head start that Cache::open began) costs a wake-up, not a
// new thread: a thread's start is 20-90 µs on the caller's path in a fresh
// process.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

namespace kcache {

class Workers {
  public:
    static constexpr std::chrono::milliseconds kLinger{2000};

    explicit Workers(std::chrono::milliseconds linger = kLinger) : linger_(linger) {}
    // Ends idle threads and joins what is left (close() normally did).
    ~Workers();
    Workers(const Workers&) = delete;
    Workers& operator=(const Workers&) = delete;

    // Runs `work` on a thread of its own: an idle one, else a new one. False
    // once closing began or when no thread can start: then `work` is left to
    // the caller, who runs it itself. Joins ended threads on the way.
    bool start(std::function<void()>& work);
    // Hands `work` to a thread that runs now: an idle one at once, else the
    // first to finish its work. For short work that may wait its turn (what
    // Cache::open hands the head start's thread), never behind a compile.
    // False when no thread runs, or once closing began: `work` is left to
    // the caller then (no thread is started for it).
    bool queue(std::function<void()>& work);
    // Refuses later start() and queue() calls and ends idle threads; work
    // already handed over still runs.
    void stop_starting();
    // Joins every thread started (after stop_starting(): none comes later).
    void join_all();

    // For tests: threads started since construction (a reused idle thread
    // is not counted again), and threads waiting for work now.
    std::size_t threads_started() const;
    std::size_t idle_threads() const;

  private:
    struct Worker {
        std::thread thread;
        std::function<void()> first;  // its first work, until it starts it
        bool ended = false;           // set under mu_ as it returns: join() is prompt
    };
    void run(Worker* self);

    const std::chrono::milliseconds linger_;
    mutable std::mutex mu_;  // guards everything below
    std::condition_variable wake_;
    std::list<Worker> workers_;                // stable addresses: each thread marks its own
    std::deque<std::function<void()>> queue_;  // handed to idle threads
    std::size_t idle_ = 0;
    std::size_t started_ = 0;
    bool closing_ = false;
};

}  // namespace kcache
