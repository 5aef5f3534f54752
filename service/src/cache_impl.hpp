#pragma once
// Cache::Impl: what a Cache is made of, wired once from the composition
// root's parts (Cache::open). Plain composition: the request's way is in
// cache.cpp (checks, plan) and ladder.cpp (the rungs, top to bottom).

#include <memory>

#include "contexts/program_cache.hpp"
#include "contexts/resident_bytes.hpp"
#include "counters.hpp"
#include "flight.hpp"
#include "identities.hpp"
#include "kcache/common/workers.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/remote/remote.hpp"
#include "kcache/service/loader.hpp"
#include "kcache/service/parts.hpp"
#include "kcache/service/service_api.hpp"
#include "ladder.hpp"
#include "plan_memo.hpp"
#include "publish.hpp"
#include "stored_tiers.hpp"

namespace kcache {

using SteadyClock = service::SteadyClock;

struct Cache::Impl {
    Impl(Config c, service::Parts parts);
    // Stops compiles and joins workers; then the members go in reverse order.
    ~Impl();

    Config config;
    // The process that made these parts (fork_safety::generation()): only it
    // uses or frees them.
    std::uint64_t made_in;
    // Every call into the compute runtime (identity, bytes to program,
    // context liveness); before the parts that ask it.
    std::unique_ptr<service::Loader> loader;
    std::unique_ptr<service::DeviceData> db;  // never null
    service::StoredTiers stored;
    // Declared after the store and before the parts that use it: destroyed
    // after them (compiles stopped, workers joined) and before the store
    // closes, flushing its queued uploads.
    std::unique_ptr<remote::Client> remote;
    service::Counters counters;
    service::Identities identities;
    service::PlanMemo plans;
    service::ProgramCache programs;    // the in-process rung's programs (own lock)
    service::ResidentBytes resident;   // loaded binaries, for new contexts (own lock)
    std::unique_ptr<Workers> workers;  // never null; the head start's thread may still run
    service::Publisher publisher;
    service::SingleFlight flight;
    service::Ladder ladder;
};

}  // namespace kcache
