#pragma once
// JitCompiler: builds OpenCL C for one device in the kcache-jit helper
// process under a deadline (docs/design.md, "The watchdog"). A compile that hangs
// is killed at the deadline; one that crashes takes only the helper down.

#include <chrono>
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
    HelperTimings helper;              // phases measured inside the helper
    std::chrono::nanoseconds wall{0};  // spawn to reap, seen by the parent
};

struct JitResult {
    std::string binary;  // validated: loads with clCreateProgramWithBinary + clBuildProgram
    std::string log;     // the driver's build log (may be empty)
    JitTimings timings;
    bool warmed = false;      // the warm-up launch ran before the binary was taken
    std::string warmup_note;  // why not, when a warm-up was asked for
};

struct JitConfig {
    std::string helper_path;                 // kcache-jit; see default_helper_path()
    std::vector<std::string> env_overrides;  // "NAME=value" for the helper (e.g. POCL_CACHE_DIR)
    StartHook on_start;                      // optional: told each helper's pid
};

// Where kcache-jit is looked for when no explicit path is given: the
// environment variable KCACHE_JIT_PATH; else `kcache-jit` in the directory of
// the binary that contains this library (the executable, or the shared object
// it is linked into); else the installed libexec path. Returns the first that
// exists (or the last candidate, so that a spawn error names it).
std::string default_helper_path();

class JitCompiler {
  public:
    // Uses `config.helper_path`, or default_helper_path() when it is empty.
    explicit JitCompiler(JitConfig config = {});

    // Builds `request` in a fresh helper; returns the validated binary, build
    // log and timings, or a typed error. Returns by `deadline` plus the time
    // to kill and reap the helper.
    Result<JitResult, JitError> compile(const JitRequest& request,
                                        Clock::time_point deadline) const;

    const std::string& helper_path() const { return config_.helper_path; }

  private:
    JitConfig config_;
};

// Turns a finished helper run into the compile result (exposed for tests of
// the mapping; compile() = run() + this).
Result<JitResult, JitError> interpret_helper_run(const RunResult& run);

}  // namespace kcache::compiler
