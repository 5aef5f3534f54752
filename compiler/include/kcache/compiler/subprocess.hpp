#pragma once
// The watchdog subprocess runner (docs/design.md, "The watchdog"): starts a program
// with posix_spawn in its own process group, feeds its stdin, captures
// stdout/stderr up to a bound, holds the deadline in the parent and, when it
// passes, SIGKILLs the whole group and reaps the child. No zombies and no
// leaked descriptors: every descriptor is close-on-exec, and the child sees
// only fds 0, 1 and 2.
//
// At the deadline the caller gets its answer right after the SIGKILL: the
// killed child is handed to a reaper thread (the kernel can take tens of
// milliseconds to tear down a process with a GPU driver mapped), which reaps
// it off the caller's path, so no zombie is left behind either.
//
// Dying with the parent: posix_spawn cannot set PR_SET_PDEATHSIG, so the
// child must do it itself. The runner exports the parent's pid in
// KCACHE_PARENT_PID; kcache-jit sets PDEATHSIG at its start and exits when
// getppid() differs (the parent died before prctl). Programs we do not
// control (ocloc) run behind `kcache-jit --exec-guard -- prog args…`, which
// does the same and then execs `prog` (PDEATHSIG survives execve).
// PDEATHSIG fires when the spawning *thread* ends; run() is synchronous, so
// that thread outlives the child.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/common/unique_fd.hpp"
#include "kcache/compiler/child_process.hpp"

namespace kcache::compiler {

using Clock = std::chrono::steady_clock;

// Name of the environment variable carrying the parent's pid to the child.
inline constexpr const char* kParentPidEnv = "KCACHE_PARENT_PID";

// What to start and how.
struct SpawnSpec {
    std::string program;                     // absolute path, no PATH search
    std::vector<std::string> args;           // argv[1..]; argv[0] is `program`
    std::vector<std::string> env_overrides;  // "NAME=value", added to (or replacing) environ
    std::string working_dir;                 // empty: inherit
    std::string stdin_data;                  // fed to the child's stdin, then closed
    std::size_t stdout_limit = 64u << 20;    // bytes kept; the rest is drained and dropped
    std::size_t stderr_limit = 1u << 20;
    // Above zero: each line the child completes on stdout moves the deadline
    // to at least now + line_grace, so a child that reports a list of tasks
    // line by line keeps a bound per task, not one for the whole list.
    std::chrono::milliseconds line_grace{0};
};

// How the child ended.
enum class ChildExit {
    exited,        // normal exit, see exit_code
    signaled,      // killed by a signal it did not get from the watchdog
    timed_out,     // the deadline passed and the watchdog killed the group
    spawn_failed,  // posix_spawn (or pipe setup) failed, see spawn_errno
};

// Returns a short name for `o` ("exited", "timed out", …).
const char* to_string(ChildExit o);

struct RunResult {
    ChildExit outcome = ChildExit::spawn_failed;
    int exit_code = -1;  // valid when outcome == exited
    int signal = 0;      // valid when outcome == signaled
    int spawn_errno = 0;
    std::string out;
    std::string err;
    bool out_truncated = false;
    bool err_truncated = false;
    pid_t pid = -1;             // the child's pid (also its process group id); -1 if never started
    Clock::time_point started;  // just before the spawn
    std::chrono::nanoseconds elapsed{0};  // from `started` to the answer
};

// A started child and the parent's ends of its standard streams (all
// non-blocking, close-on-exec) plus a pidfd that polls readable once it
// exited (invalid where the kernel lacks pidfd_open).
struct Spawned {
    ChildProcess child;
    UniqueFd in;  // a socket: writes need MSG_NOSIGNAL
    UniqueFd out;
    UniqueFd err;
    UniqueFd exited;
};

// Starts `spec.program` with `spec.args`, environment and working directory
// (stdin_data and the limits are the caller's business); returns the child or
// the errno value of the failed step.
Result<Spawned, int> spawn(const SpawnSpec& spec);

// Hands a child that was sent SIGKILL (or is exiting) to the process-wide
// reaper thread, which reaps it without blocking the caller.
void reap_later(ChildProcess child);

// Runs `spec` until it exits or `deadline` (moved on by `spec.line_grace`)
// passes (then SIGKILL to the group and reap). Never throws; failures to start are
// ChildExit::spawn_failed.
RunResult run(const SpawnSpec& spec, Clock::time_point deadline);

// Observer for logs and tests: called with the child's pid (== its process
// group id) right after it started, before any waiting.
using StartHook = std::function<void(pid_t pid)>;

// Same as run(), calling `on_start(pid)` once the child exists.
RunResult run(const SpawnSpec& spec, Clock::time_point deadline, const StartHook& on_start);

}  // namespace kcache::compiler
