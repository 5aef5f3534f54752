#pragma once
// The service's C++ API (Cache, Program, load_config, …) as the library's
// own code, the CLI and the in-tree tools and tests use it: what the C API
// calls. Operator libraries use the public <kcache/kcache.hpp> instead, a
// header-only layer over the C API with the same names. Both share the plain
// types of <kcache/kcache_types.hpp> (Config, Outcome, the requests,
// CacheStats); the classes and functions here live in the inline namespace
// kcache::core, so their mangled names never meet the layer's
// (docs/design.md, "The public API"). Nothing here is exported from
// libkcache.so. Thread-safe. Every member is noexcept unless its comment says
// otherwise: failures come back as statuses. Fork-safe: a Cache used in the
// child of a fork() makes its own parts at the child's first call, from the
// same Config, as a fresh process would (kcache/common/fork.hpp).

#include "kcache/config/config.hpp"
#include "kcache/kcache_types.hpp"
#include "kcache/observe/names.hpp"
#include "kcache/opencl.h"
#include "kcache/remote/remote.hpp"
#include "kcache/version.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kcache {
inline namespace core {

// Returns the library's version (KCACHE_VERSION_STRING of the build).
const char* version() noexcept;

// Routes the process's kcache diagnostics up to `most_verbose` (warnings and
// errors unless asked) to `handler`; an empty handler restores the default
// (one line on stderr per message up to KCACHE_LOG_LEVEL).
void set_log_handler(LogHandler handler, LogLevel most_verbose = LogLevel::warning) noexcept;

// A built program (one reference owned by this object) and how it came.
class Program {
  public:
    Program() noexcept = default;
    Program(Program&& o) noexcept;
    Program& operator=(Program&& o) noexcept;
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
    ~Program();

    cl_program get() const noexcept { return program_; }
    // Gives the caller the reference; this object no longer releases it.
    cl_program release() noexcept;
    const Outcome& outcome() const noexcept { return outcome_; }
    bool ok() const noexcept { return program_ != nullptr; }

  private:
    friend class Cache;
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
    ~Cache();

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
    // Learns now what requests of `device` need of it (its identity, the
    // quirks that apply, its AOT target, its half of a key), as its first
    // request would, and keeps it as that request keeps it (a root device's
    // for this object's life), so that its first request does not; for a
    // caller that knows its devices before it asks for programs. ok; else
    // invalid_argument (null), disabled, or device_error and why.
    Outcome prepare(cl_device_id device) noexcept;
    // Waits for background compiles started by this object, for the
    // warm-ups that follow JIT answers on CPU devices, then for its queued
    // remote uploads (at most `limit` in all).
    void drain(std::chrono::milliseconds limit) noexcept;
    // Why this object's remote uploads were skipped or failed, each kind once
    // (empty without a remote tier or when all went out).
    std::vector<remote::UploadNote> upload_notes() const;
    const Config& config() const noexcept;

    struct Impl;

  private:
    explicit Cache(std::unique_ptr<Impl> impl);
    // This process's parts; in a forked child, made at its first call (null
    // when they cannot be: the call then answers `disabled`).
    Impl* live() noexcept;
    Impl* reopen_in_child() noexcept;

    std::atomic<Impl*> impl_;  // owned; the parent's, in a child, until reopened
    std::atomic<std::uint64_t> failed_in_{~0ull};  // the generation whose reopening failed
};

}  // namespace core
}  // namespace kcache
