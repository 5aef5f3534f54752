#pragma once
// kcache C++ API for operator libraries: one call returns a ready cl_program
// for a kernel on a device within a time budget, and says how it got it
// (docs/design.md, "The lookup ladder"). Thread-safe; never throws.

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kcache {

// How long a request may wait for a compile.
enum class Mode {
    blocking,    // look up, then compile (shared with concurrent callers) up to the deadline
    fail_fast,   // never compile: not_cached at once when nothing is stored
    background,  // not_ready at once on a miss; a compile starts so a later call hits
};

// Which step of the ladder answered (or was the last tried).
enum class Rung {
    in_process,      // this process already built it for this context and device
    user_store,      // exact native binary from the user store
    pack,            // exact native binary from an installed/read-only pack
    aot,             // ahead-of-time binary for the device's target, from a pack
    failure_record,  // a fresh failure record: answered at once, no compile
    jit,             // compiled just in time in the helper process
    none,            // nothing answered (see status)
};

enum class StatusCode {
    ok = 0,
    not_cached,        // fail_fast and nothing stored
    not_ready,         // background: a compile runs (or ran and failed); ask again
    timeout,           // the compile did not finish by the deadline (now or recorded)
    crashed,           // the driver's compiler crashed (now or recorded)
    build_error,       // the source did not build (log in message)
    unsupported,       // the device lacks what the variant needs; nothing compiled
    unknown_kernel,    // no kernel or alias of that name / bad variant parameter
    invalid_argument,  // null handle, device not in context, malformed request
    disabled,          // KCACHE_DISABLE is set: the caller should build itself
    device_error,      // an OpenCL call failed
    store_error,       // the store could not be opened or written
    config_error,      // a malformed configuration value
    internal_error,
};

// Returns the enumerator's name ("ok", "user_store", …).
const char* to_string(StatusCode s);
const char* to_string(Rung r);
const char* to_string(Mode m);

// Where an effective configuration value came from.
enum class Source { default_value, environment, config_file };
const char* to_string(Source s);

// Effective configuration. Resolved from KCACHE_* environment variables,
// then the config file ($KCACHE_CONFIG, else $XDG_CONFIG_HOME/kcache/config,
// lines `key = value`), then defaults.
struct Config {
    std::filesystem::path dir;                       // KCACHE_DIR
    std::uint64_t max_bytes = 1ull << 30;            // KCACHE_MAX_SIZE (bytes; K/M/G suffix)
    std::chrono::milliseconds jit_timeout{120'000};  // KCACHE_JIT_TIMEOUT_MS: default deadline
    bool disabled = false;                           // KCACHE_DISABLE (0/1/true/false)
    bool read_only = false;                          // KCACHE_READONLY
    std::vector<std::filesystem::path> packs;        // KCACHE_PACKS (':'-separated files/dirs)
    std::string jit_helper;                          // KCACHE_JIT_PATH (kcache-jit)
    // KCACHE_MAX_PROGRAMS: built programs kept per Cache for repeat hits, over
    // all contexts; the least recently used is released first (0: keep none).
    std::size_t max_programs = 1024;
    // KCACHE_MAX_RESIDENT_BYTES: decoded, checksum-verified binaries kept in
    // memory per Cache, so that a new context costs only the driver's load
    // (bytes; K/M/G suffix; 0: off).
    std::uint64_t max_resident_bytes = 64ull << 20;
    std::map<std::string, std::pair<std::string, Source>> origins;  // key → (value, source)
};

// Resolves the configuration; returns false and sets `error` (naming the
// variable or file:line) on a malformed value.
bool load_config(Config& out, std::string& error);

// Why each rung above the answering one missed, and how long things took.
struct Outcome {
    StatusCode status = StatusCode::internal_error;
    Rung rung = Rung::none;
    std::vector<std::pair<Rung, std::string>> misses;  // in ladder order
    std::string message;                               // for people; build log on build_error
    std::string key;                                   // hex cache key ("" before it is known)
    std::chrono::microseconds total{0};
    std::chrono::microseconds compile{0};  // helper wall time when a JIT ran
    // The binary came from this process's memory (no store read, no decode);
    // `rung` still names the tier that holds it (user_store or pack; jit or
    // aot only when the user store is read-only).
    bool resident = false;
};

// A registry kernel: name or alias plus variant parameters ("dtype" → "f16").
struct KernelRequest {
    std::string kernel;
    std::map<std::string, std::string> params;
    std::optional<std::chrono::milliseconds> deadline;  // default: Config::jit_timeout
    Mode mode = Mode::blocking;
};

// The caller's own kernel, with the same ladder and watchdog.
struct SourceRequest {
    std::string name;  // descriptive only; never part of the key
    std::string source;
    std::string options;
    std::vector<std::string> entry_points;  // empty: all kernels of the program
    std::size_t warmup_local_size = 0;      // >0: launch once (CPU drivers) before storing
    std::optional<std::chrono::milliseconds> deadline;
    Mode mode = Mode::blocking;
};

// A built program (one reference owned by this object) and how it came.
class Program {
  public:
    Program() = default;
    Program(Program&& o) noexcept;
    Program& operator=(Program&& o) noexcept;
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
    ~Program();

    cl_program get() const { return program_; }
    // Gives the caller the reference; this object no longer releases it.
    cl_program release();
    const Outcome& outcome() const { return outcome_; }
    bool ok() const { return program_ != nullptr; }

  private:
    friend class Cache;
    cl_program program_ = nullptr;
    Outcome outcome_;
};

// Raw binary bytes for a request instead of a program.
struct Binary {
    std::vector<unsigned char> bytes;
    Outcome outcome;
};

struct CacheStats {
    std::uint64_t entries = 0, raw_bytes = 0, stored_bytes = 0, evictions = 0, corruptions = 0;
    std::uint64_t in_process_hits = 0, store_hits = 0, pack_hits = 0, aot_hits = 0;
    std::uint64_t failure_hits = 0, jit_compiles = 0, jit_failures = 0;
    std::uint64_t resident_hits = 0;  // answered from binaries kept in memory
    std::uint64_t programs_released =
        0;  // in-process programs let go (context gone, bound, forget)
};

class Cache {
  public:
    // Opens the cache described by `config` (see load_config). On failure
    // returns nullptr and sets `outcome` (status and message).
    static std::unique_ptr<Cache> open(const Config& config, Outcome* outcome = nullptr);
    // load_config() then open().
    static std::unique_ptr<Cache> open_default(Outcome* outcome = nullptr);
    ~Cache();

    // A ready (built) program for a registry kernel on `device` in `context`.
    Program program(cl_context context, cl_device_id device, const KernelRequest& request);
    // The same for the caller's own kernel source.
    Program program(cl_context context, cl_device_id device, const SourceRequest& request);
    // The binary bytes instead (nothing is built in `context`).
    Binary binary(cl_context context, cl_device_id device, const KernelRequest& request);
    // Counters of this process plus the store's sizes.
    CacheStats stats();
    // Releases every program this cache keeps for `context` (call it before
    // releasing a context for good); returns how many. Programs the caller
    // holds stay valid; a later request for `context` builds again.
    std::size_t forget(cl_context context) noexcept;
    // Waits for background compiles started by this object (at most `limit`).
    void drain(std::chrono::milliseconds limit);
    const Config& config() const;

    struct Impl;

  private:
    explicit Cache(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace kcache
