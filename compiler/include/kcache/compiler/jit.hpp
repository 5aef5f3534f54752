#pragma once
// JitCompiler: builds OpenCL C for one device in a kcache-jit helper process
// under a deadline (docs/design.md, "The watchdog"). Helpers are pooled per device
// and keep their OpenCL platform and context between compiles; a compile
// that hangs is killed (its helper with it) at the deadline and one that
// crashes takes only its helper down: the next compile gets a fresh one.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/compiler/jit_protocol.hpp"
#include "kcache/compiler/subprocess.hpp"

namespace kcache::compiler {

enum class JitErrc {
    timeout,           // the deadline passed; the helper was killed
    crash,             // the helper died of a signal (see `signal`)
    build_error,       // the driver rejected the source (see `log`)
    device_not_found,  // no device matches the request's selector
    protocol,          // a malformed frame in either direction
    spawn_failed,      // the helper could not be started
    driver_error,      // an OpenCL call around the build failed
    invalid_binary,    // the built binary did not load back
};

// Returns a short name for `k` ("timeout", "crash", …).
const char* to_string(JitErrc k);

struct JitError {
    JitErrc kind = JitErrc::protocol;
    std::string message;  // one line for people
    int signal = 0;       // kind == crash
    std::string log;      // compiler build log (build_error), else the helper's stderr tail
};

struct JitTimings {
    HelperTimings helper;                  // phases measured inside the helper
    std::chrono::nanoseconds wall{0};      // compile() called to answered, seen by the parent
    std::chrono::nanoseconds queued{0};    // waiting for a pooled helper of the device to be free
    std::chrono::nanoseconds spawn{0};     // posix_spawn to the helper's main(); 0: helper reused
    std::chrono::nanoseconds transfer{0};  // the request in and the reply out through the pipes
};

struct JitResult {
    std::string binary;  // validated: loads with clCreateProgramWithBinary + clBuildProgram
    std::string log;     // the driver's build log (may be empty)
    JitTimings timings;
    bool warmed = false;        // the warm-up launch ran before the binary was taken
    std::string warmup_note;    // why not, when a warm-up was asked for
    bool warm_pending = false;  // the warm-up runs after this answer (JitRequest::warm_after_reply)
    pid_t helper_pid = -1;      // the helper that built it
    std::uint64_t served = 0;   // compiles that helper served, this one included (1: fresh)
};

// Default for JitConfig::idle_timeout (and KCACHE_JIT_IDLE_MS).
inline constexpr std::chrono::milliseconds kDefaultHelperIdle{30'000};

struct JitConfig {
    std::string helper_path;                 // kcache-jit; see default_helper_path()
    std::vector<std::string> env_overrides;  // "NAME=value" for the helper (e.g. POCL_CACHE_DIR)
    StartHook on_start;                      // optional: told each helper's pid
    // Persistent helpers per device (at most this many compiles of one device
    // run at once; more wait for a free helper within their deadline).
    // 0: a fresh helper per compile, which exits after it.
    std::size_t pool_size = 0;
    // A pooled helper idle this long is stopped (the next compile starts one).
    std::chrono::milliseconds idle_timeout = kDefaultHelperIdle;
};

class JitPool;

// Told how the warm-up that followed an answer ended (JitRequest::
// warm_after_reply), exactly once, on a thread of the pool: the warmed
// result (`warmed` true); a result the warm-up could not improve (`warmed`
// false, `warmup_note` says why); or the error that ended it (the deadline,
// a crash, the pool shut down).
using WarmedHook = std::function<void(Result<JitResult, JitError> second)>;

// Where kcache-jit is looked for when no explicit path is given (the layers
// above pass Config::jit_helper, KCACHE_JIT_PATH, when it is set): `kcache-jit`
// in the directory of the binary that contains this library (the executable, or the shared object
// it is linked into); else the installed libexec path relative to it; else,
// for programs run from the build tree, the helper built there; else the
// configured install path. Returns the first that exists (or the last
// candidate, so that a spawn error names it).
std::string default_helper_path();

class JitCompiler {
  public:
    // Uses `config.helper_path`, or default_helper_path() when it is empty.
    explicit JitCompiler(JitConfig config = {});
    JitCompiler(JitCompiler&&) noexcept;
    JitCompiler& operator=(JitCompiler&&) noexcept;
    // Stops every helper (see shutdown()).
    ~JitCompiler();

    // Builds `request` in a pooled helper of its device (a fresh one when the
    // pool is off, or for a request with an address-space cap, which a
    // long-lived helper cannot take back); returns the validated binary,
    // build log and timings, or a typed error. Returns by `deadline` plus
    // the time to send SIGKILL; the killed helper is reaped off this path.
    // A pooled request with warm_after_reply returns before its warm-up
    // (warm_pending); the helper then warms up, still under `deadline`, and
    // `on_warmed` is told how that ended. A fresh helper warms up before it
    // answers, as without warm_after_reply (`on_warmed` is not called).
    Result<JitResult, JitError> compile(const JitRequest& request, Clock::time_point deadline,
                                        WarmedHook on_warmed = {}) const;

    // Waits until no warm-up that follows an answer is running, or until
    // `until` (each ends by its compile's deadline, or at once after
    // shutdown()); its WarmedHook has returned.
    void drain(Clock::time_point until = Clock::time_point::max()) const;

    // Kills every helper, busy ones included (their compiles return a
    // crash), and refuses later compiles of the pool (spawn_failed).
    void shutdown();

    // Pids of the pooled helpers alive now, busy or idle (for logs and tests).
    std::vector<pid_t> helper_pids() const;

    const std::string& helper_path() const { return config_.helper_path; }

  private:
    JitConfig config_;
    std::unique_ptr<JitPool> pool_;
};

// Turns a finished helper run into the compile result (exposed for tests of
// the mapping; compile() = run() + this).
Result<JitResult, JitError> interpret_helper_run(const RunResult& run);

}  // namespace kcache::compiler
