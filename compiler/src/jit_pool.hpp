#pragma once
// JitPool: persistent kcache-jit helpers, at most `pool_size` per device,
// behind JitCompiler. Each helper keeps its OpenCL platform and context
// between compiles. A compile takes a free helper of its device (or starts
// one, or waits for one within its deadline) and gives it back after the
// reply; a helper that passed a deadline, crashed or sent garbage is killed
// and forgotten, so the next compile of that device starts a fresh one.
//
// A request with warm_after_reply is answered before its warm-up: its
// helper stays busy until the second reply, which a thread of its own reads
// (under the compile's deadline) and hands to the compile's WarmedHook.
//
// One janitor thread per pool, started with the first helper, starts the
// helpers and stops those idle for `idle_timeout`. Starting them there
// matters: PR_SET_PDEATHSIG fires when the *thread* that spawned a helper
// ends, and compiles run on short-lived threads; the janitor lives as long
// as the pool. Killed and stopped helpers go to the process-wide reaper, off
// the callers' paths.

#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include "kcache/compiler/jit.hpp"
#include "pooled_helper.hpp"

namespace kcache::compiler {

class JitPool {
  public:
    // Uses `config.helper_path`, env_overrides, on_start (told each new
    // helper's pid), pool_size (> 0) and idle_timeout.
    explicit JitPool(const JitConfig& config);
    // shutdown(), then joins the janitor.
    ~JitPool();
    JitPool(const JitPool&) = delete;
    JitPool& operator=(const JitPool&) = delete;

    // See JitCompiler::compile().
    Result<JitResult, JitError> compile(const JitRequest& request, Clock::time_point deadline,
                                        WarmedHook on_warmed);

    // See JitCompiler::drain().
    void drain(Clock::time_point until);

    // Kills every helper, busy ones included; later compiles fail at once.
    void shutdown();

    // Pids of the helpers alive now.
    std::vector<pid_t> pids() const;

  private:
    struct Entry {
        std::string device;                    // the selector, flattened
        std::unique_ptr<PooledHelper> helper;  // null while it is being started
        bool busy = true;
        Clock::time_point idle_since;
    };
    using Slot = std::list<Entry>::iterator;

    Result<Slot, JitError> acquire(const std::string& device, Clock::time_point deadline,
                                   bool& started);
    Result<std::unique_ptr<PooledHelper>, int> start_on_janitor();
    void give_back(Slot slot, bool keep);
    // Reads the second reply of `slot`'s helper (its warm-up) on a thread of
    // its own, tells `on_warmed`, then gives the helper back.
    void follow_warmup(Slot slot, Clock::time_point deadline, WarmedHook on_warmed);
    void janitor();
    void stop_idle(Clock::time_point now, std::optional<Clock::time_point>& next);

    SpawnSpec spec_;
    std::size_t size_;
    std::chrono::milliseconds idle_;
    StartHook on_start_;

    mutable std::mutex mu_;  // guards everything below
    std::list<Entry> entries_;
    std::condition_variable freed_;             // an entry became free or went away
    std::condition_variable wake_;              // the janitor has work
    std::deque<std::function<void()>> starts_;  // run by the janitor
    std::size_t following_ = 0;                 // warm-ups being followed (follow_warmup)
    std::condition_variable followed_;          // following_ went down
    bool closing_ = false;
    std::thread janitor_;
};

}  // namespace kcache::compiler
