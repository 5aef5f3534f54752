#pragma once
// The driver canary's verdicts as the runtime holds them: once per process,
// store and driver identity, read from <store>/canary/ or got by running the
// canary (with the differential check against earlier drivers' binaries in
// the store). Between processes sharing a store, a lock file under
// <store>/locks/ lets one of them run the canary while the others wait and
// then read its record, so the canary runs once per driver and store.
//
// Under enforce the first request waits for the verdicts. Under warn (where
// no verdict changes what is served) they are asked for after the answer,
// on a worker of the cache (service/src/ladder/canary_gate.hpp), the
// canary's helpers below the caller's priority, and the verdicts are logged
// when they come; the cache waits for it when it closes.

#include <functional>
#include <memory>

#include "kcache/canary/canary.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/kcache_types.hpp"

namespace kcache::store {
class Store;
}

namespace kcache::service {

// What the canary uses of a cache (a null store: no differential check).
struct CanaryParts {
    store::Store* store = nullptr;  // earlier drivers' binaries
    // Called once with each record the canary has just run (not one read
    // from the store), on the thread that ran it.
    std::function<void(const canary::Record&)> on_run;
};

// A driver's identity (canary::driver_identity) and its id, made once per
// request for the gates that ask for them.
struct DriverRef {
    const canary::DriverIdentity& identity;
    const std::string& id;  // identity.id()
};

// The verdicts of `device`'s driver (`driver`) for a cache of `config`:
// known ones, else the canary's, run by this call (below the caller's
// priority under warn) or waited for where another call runs it. Throws
// only std::bad_alloc.
std::shared_ptr<const canary::Record> driver_verdicts(const Config& config,
                                                      const device_db::DeviceIdentity& device,
                                                      const DriverRef& driver,
                                                      const CanaryParts& parts);

}  // namespace kcache::service
