#pragma once
// The in-process rung: built programs per (context, device, key), with the
// request-signature fast path in front, bounded, and let go when their
// context goes away.
//
// Why contexts need care: a cl_program keeps its context alive, so a program
// kept here would keep the context alive after its owner released it (and
// the context's destructor callback, OpenCL 3.0, cannot fire while it is
// held). Drivers differ in what CL_CONTEXT_REFERENCE_COUNT shows: PoCL counts
// each program's reference in it, NVIDIA's driver does not (its programs keep
// the context's memory, ~90 MB on an H100, without showing in the count).
// So the cache holds one reference of its own on every context it keeps
// programs for, and knows exactly what of the count is its own: that
// reference, plus its programs where the platform counts them (probed once
// per platform: an unbuilt program is created and released while the count
// is watched). Three things release programs:
//  1. The sweep. On every insert (the slow path: a binary was just loaded)
//     each context with programs here is asked for CL_CONTEXT_REFERENCE_COUNT.
//     When the count is no more than the cache's own share, nothing but this
//     cache keeps the context alive (the caller released it and holds no
//     queue, buffer or kernel on it; a program the caller still holds keeps
//     its own reference and stays valid), so its programs and the cache's
//     reference are released and the driver frees the context. Inserting is
//     a load (a hundred microseconds at least); the sweep adds one query per
//     context kept, and repeat hits never sweep.
//  2. The bound: at most `max_programs` programs; the least recently used is
//     released first (with the context's reference, after its last program).
//  3. forget(context): the owner says the context is going.
// Holding a reference also means a context kept here is never destroyed
// under the cache, so its address cannot be reused by a new context while
// entries name it.
// What the sweep and the bound let go of is released by the releaser thread
// (releaser.hpp), never in the request: destroying a context the owner
// released costs 60 ms on NVIDIA's driver, which the next program() paid
// when it was released in place. The releaser also sweeps every
// kSweepPeriod while contexts are kept, so a released context's memory goes
// back within about a second with no further request. forget() releases in
// the caller's thread: the owner asked for it there.

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cl_util.hpp"
#include "kcache/service/loader.hpp"
#include "kcache/service/service_api.hpp"
#include "kcache/store/key.hpp"
#include "releaser.hpp"

namespace kcache::service {

// What identifies a request as the caller gave it, for the repeat-hit path.
std::string request_signature(const KernelRequest& r);
std::string request_signature(const SourceRequest& r);

// How often the releaser sweeps while contexts are kept.
inline constexpr std::chrono::milliseconds kSweepPeriod{250};

class ProgramCache {
  public:
    // Keeps at most `max_programs` programs (0: none); asks `loader` (which
    // must outlive it) about contexts and references. `background` (may be
    // empty) runs once on the releaser's thread when the first load starts it.
    ProgramCache(std::size_t max_programs, Loader& loader, std::function<void()> background = {});
    ~ProgramCache();
    ProgramCache(const ProgramCache&) = delete;
    ProgramCache& operator=(const ProgramCache&) = delete;

    // What find_signature found.
    struct SignatureHit {
        cl_program program = nullptr;  // a new reference (the caller's), or null
        store::Key key;                // the program's key, when there is one
        bool context_known = false;    // whether any program is kept for the pair
    };
    // The program `signature` resolved to on (`context`, `device`); when
    // none, whether the pair has any program here (when not, find() for it
    // would miss too, and a new context's first load skips it).
    SignatureHit find_signature(cl_context context, cl_device_id device,
                                const std::string& signature);
    // A new reference to the program kept for (`context`, `device`, `key`),
    // remembering that `signature` resolved to it; null when none.
    cl_program find(cl_context context, cl_device_id device, const store::Key& key,
                    const std::string& signature);
    // Keeps `program` for (`context`, `device`, `key`) unless one is kept
    // already, remembering that `signature` resolved to it; sweeps and
    // applies the bound; returns a new reference to the kept program for the
    // caller (never null). One lock for all of it: this is the path of a new
    // context's first load. `platform` is the device's (null: asked here).
    cl_program insert(cl_context context, cl_device_id device, cl_platform_id platform,
                      const store::Key& key, ProgramRef program, const std::string& signature);
    // Starts the releaser's thread now (Releaser::start_early), from the
    // calling thread, so that the first load starts none.
    void start_releaser_early() noexcept;
    // Releases every program kept for `context`; returns how many.
    std::size_t forget(cl_context context) noexcept;
    // Programs kept now.
    std::size_t size() const;
    // Programs released so far (sweep, bound, forget).
    std::uint64_t released() const;
    // Starts reading this cache's own state into the CPU's caches
    // (hot_path.hpp): a new context's first request reads all of it.
    void prefetch() const noexcept;

    struct State;

  private:
    std::unique_ptr<State> state_;
    std::unique_ptr<Releaser> releaser_;  // stopped first by the destructor
};

}  // namespace kcache::service
