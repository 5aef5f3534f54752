#pragma once
// kcache C++ API for operator libraries: one call returns a ready cl_program
// for a kernel on a device within a time budget, and says how it got it
// (docs/design.md, "The lookup ladder"). Thread-safe. Every member is
// noexcept unless its comment says otherwise: failures come back as statuses.
//
// Header-only: every function here is inline code over the C API of
// <kcache/kcache.h> (kcache_detail.hpp), so a program built with it depends
// only on libkcache.so's C ABI (kcache_*), never on the C++ standard
// library's layout inside kcache.

#include "kcache/kcache.h"
#include "kcache/kcache_types.hpp"
#include "kcache/opencl.h"
#include "kcache/version.h"

#include <memory>
#include <string>
#include <utility>

namespace kcache {

// Returns the enumerator's name ("ok", "user_store", …).
inline const char* to_string(StatusCode s) noexcept;
inline const char* to_string(Rung r) noexcept;
inline const char* to_string(Mode m) noexcept;
inline const char* to_string(MissCause c) noexcept;
inline const char* to_string(Source s) noexcept;

// Returns the library's version (KCACHE_VERSION_STRING of the build).
inline const char* version() noexcept;

// Routes the process's kcache diagnostics up to `most_verbose` (warnings and
// errors unless asked) to `handler`; an empty handler restores the default
// (one line on stderr per message up to KCACHE_LOG_LEVEL).
inline void set_log_handler(LogHandler handler, LogLevel most_verbose = LogLevel::warning) noexcept;

// Resolves the configuration; returns false and sets `error` (naming the
// variable or file:line) on a malformed value.
inline bool load_config(Config& out, std::string& error) noexcept;

// A built program (one reference owned by this object) and how it came.
class Program {
  public:
    Program() noexcept = default;
    Program(Program&& o) noexcept
        : program_(std::exchange(o.program_, nullptr)), outcome_(std::move(o.outcome_)) {}
    Program& operator=(Program&& o) noexcept {
        if (this != &o) {
            reset();
            program_ = std::exchange(o.program_, nullptr);
            outcome_ = std::move(o.outcome_);
        }
        return *this;
    }
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
    ~Program() { reset(); }

    cl_program get() const noexcept { return program_; }
    // Gives the caller the reference; this object no longer releases it.
    cl_program release() noexcept { return std::exchange(program_, nullptr); }
    const Outcome& outcome() const noexcept { return outcome_; }
    bool ok() const noexcept { return program_ != nullptr; }

  private:
    friend class Cache;
    void reset() noexcept {
        if (program_ != nullptr) {
            clReleaseProgram(program_);
            program_ = nullptr;
        }
    }
    cl_program program_ = nullptr;
    Outcome outcome_;
};

class Cache {
  public:
    // Opens the cache described by `config` (see load_config). On failure
    // returns nullptr and sets `outcome` (status and message). A user store
    // that an earlier open found sound (its file stamped, docs/design.md
    // "Hot copies") has its SQLite database opened at the first request that
    // needs it; a problem found then shows in that request's outcome as a
    // miss of the user store.
    static std::unique_ptr<Cache> open(const Config& config, Outcome* outcome = nullptr) noexcept;
    // load_config() then open().
    static std::unique_ptr<Cache> open_default(Outcome* outcome = nullptr) noexcept;
    ~Cache() { kcache_close(cache_); }
    Cache(const Cache&) = delete;
    Cache& operator=(const Cache&) = delete;

    // A ready (built) program for a registry kernel on `device` in `context`.
    Program program(cl_context context, cl_device_id device, const KernelRequest& request) noexcept;
    // The same for the caller's own kernel source.
    Program program(cl_context context, cl_device_id device, const SourceRequest& request) noexcept;
    // The binary bytes of the program program() answers (same ladder: a miss
    // compiles, and the program is built in `context` on the way).
    Binary binary(cl_context context, cl_device_id device, const KernelRequest& request) noexcept;
    // Counters of this process plus the store's sizes (zero sizes when the
    // store cannot be read).
    CacheStats stats() noexcept;
    // Releases every program this cache keeps for `context` (call it before
    // releasing a context for good); returns how many. Programs the caller
    // holds stay valid; a later request for `context` builds again.
    std::size_t forget(cl_context context) noexcept;
    // Learns now what requests of `device` need of it (kcache_prepare_device),
    // so that its first request does not; ok, or why not.
    Outcome prepare(cl_device_id device) noexcept;
    // Waits for background compiles started by this object, for the
    // warm-ups that follow JIT answers on CPU devices, then for its queued
    // remote uploads (at most `limit` in all).
    void drain(std::chrono::milliseconds limit) noexcept;
    // The configuration this cache was opened with.
    const Config& config() const noexcept { return config_; }
    // The C handle (owned by this object), for calls of the C API.
    kcache_cache* handle() const noexcept { return cache_; }

  private:
    Cache(kcache_cache* cache, Config config) noexcept
        : cache_(cache), config_(std::move(config)) {}
    kcache_cache* cache_;
    Config config_;
};

}  // namespace kcache

#include "kcache/kcache_detail.hpp"
