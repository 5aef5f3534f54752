#pragma once
// PooledHelper: one persistent `kcache-jit --serve` process and the exchange
// of one request for one reply under a deadline. It never reaps on its own:
// a helper that died stays a zombie (its pid and group id cannot be reused)
// until its owner retires it.

#include <optional>
#include <string>

#include "kcache/compiler/subprocess.hpp"

namespace kcache::compiler {

// How an exchange ended.
enum class ExchangeEnd {
    reply,      // a complete reply frame arrived (`reply`)
    timed_out,  // the deadline passed; the helper's group was sent SIGKILL
    died,       // the helper exited or was killed before replying (`status`)
    bad_frame,  // bytes that are not a reply frame (`problem`); the helper is useless
};

struct Exchange {
    ExchangeEnd end = ExchangeEnd::died;
    std::string reply;       // the complete reply frame
    std::string err;         // the tail of what the helper wrote on stderr meanwhile
    ExitStatus status;       // ExchangeEnd::died
    std::string problem;     // ExchangeEnd::bad_frame
    Clock::time_point sent;  // the request started out
    Clock::time_point done;  // the exchange ended
};

class PooledHelper {
  public:
    // Starts `spec.program --serve`; error: the errno value of the failed step.
    static Result<PooledHelper, int> start(const SpawnSpec& spec);

    pid_t pid() const { return proc_.child.pid(); }
    // True until the process has exited (a cheap waitid; never reaps).
    bool alive() const { return !proc_.child.has_exited(); }
    // Requests sent so far.
    std::uint64_t served() const { return served_; }

    // Sends one request `frame` and waits for its reply until `deadline`;
    // at the deadline SIGKILLs the helper's group and returns at once.
    Exchange exchange(const std::string& frame, Clock::time_point deadline);

    // SIGKILLs the group and hands the process to the reaper thread.
    void retire();

  private:
    explicit PooledHelper(Spawned proc) : proc_(std::move(proc)) {}

    Spawned proc_;
    std::uint64_t served_ = 0;
};

}  // namespace kcache::compiler
