#pragma once
// The in-process rung: built programs per (context, device, key), with the
// request-signature fast path in front, bounded, and let go when their
// context goes away.
//
// Why contexts need care: a cl_program holds a reference on its context, so a
// program kept here keeps the context alive after its owner released it, and
// the context's destructor callback (OpenCL 3.0) cannot fire while it is held.
// Four things release programs:
//  1. The sweep. On every insert (the slow path: a binary was just loaded)
//     each context with programs here is asked for CL_CONTEXT_REFERENCE_COUNT.
//     When the count is no more than the programs kept here on it, nothing but
//     this cache keeps the context alive (the caller released it and holds no
//     queue, buffer or kernel on it; a program the caller still holds counts
//     once, like ours, and stays valid), so its programs are released and the
//     driver can free the context. This needs a driver that counts a program's
//     reference in its context's count: that is probed once per platform (an
//     unbuilt program is created and released while the count is watched).
//     Where it does not, the sweep is off and 2 and 3 are what release.
//     Inserting is a load (hundreds of microseconds at least); the sweep adds
//     one query per context kept, and repeat hits never sweep.
//  2. The bound: at most `max_programs` programs; the least recently used is
//     released first.
//  3. forget(context): the owner says the context is going.
//  4. The context destructor callback, registered once per context where the
//     driver has it. It fires only once the context is destroyed, i.e. when
//     nothing here held it or on a driver whose programs do not hold their
//     context, and drops what remains for it, so that a later context at the
//     same address never meets stale entries. It holds only a weak reference
//     to the cache's state, so a cache destroyed first is safe.
// Programs are released outside the lock: releasing a context's last program
// destroys the context and runs the callback, which takes the lock.

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cl_util.hpp"
#include "kcache/kcache.hpp"
#include "kcache/store/key.hpp"

namespace kcache::service {

// What identifies a request as the caller gave it, for the repeat-hit path.
std::string request_signature(const KernelRequest& r);
std::string request_signature(const SourceRequest& r);

class ProgramCache {
  public:
    // Keeps at most `max_programs` programs (0: none).
    explicit ProgramCache(std::size_t max_programs);
    ~ProgramCache();
    ProgramCache(const ProgramCache&) = delete;
    ProgramCache& operator=(const ProgramCache&) = delete;

    // A new reference (the caller's) to the program `signature` resolved to on
    // (`context`, `device`), and its key; nullopt when none is kept.
    std::optional<std::pair<cl_program, store::Key>> find_signature(cl_context context,
                                                                    cl_device_id device,
                                                                    const std::string& signature);
    // A new reference to the program kept for (`context`, `device`, `key`); null when none.
    cl_program find(cl_context context, cl_device_id device, const store::Key& key);
    // Keeps `program` for (`context`, `device`, `key`) unless one is kept
    // already, sweeps and applies the bound; returns a new reference to the
    // kept program for the caller (never null).
    cl_program insert(cl_context context, cl_device_id device, const store::Key& key,
                      ProgramRef program);
    // Remembers that `signature` resolved to `key` on (`context`, `device`),
    // when a program for it is kept.
    void remember(cl_context context, cl_device_id device, std::string signature,
                  const store::Key& key);
    // Releases every program kept for `context`; returns how many.
    std::size_t forget(cl_context context) noexcept;
    // Programs kept now.
    std::size_t size() const;
    // Programs released so far (sweep, bound, forget, destructor callback).
    std::uint64_t released() const;

    struct State;  // shared with the destructor callbacks (weakly)

  private:
    std::shared_ptr<State> state_;
};

}  // namespace kcache::service
