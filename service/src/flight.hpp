#pragma once
// Single-flight JIT: one compile per key at a time. Threads of this process
// share a future; processes share a per-key file lock and re-check the user
// store once they hold it. The compile runs in a kcache-jit helper under the
// watchdog (compiler/), on a worker thread, so that a request can stop
// waiting at its deadline or not wait at all (Mode::background).

#include <sys/types.h>

#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "counters.hpp"
#include "kcache/common/workers.hpp"
#include "kcache/compiler/jit.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/service/service_api.hpp"
#include "plan.hpp"
#include "publish.hpp"
#include "stored_tiers.hpp"

namespace kcache::service {

// What a (shared) compile produced.
struct Compiled {
    StatusCode status = StatusCode::internal_error;
    Rung rung = Rung::jit;  // jit, or user_store when another process built it first
    store::Bytes bytes;
    std::string message;
    std::chrono::microseconds compile{0};
    std::vector<RungMiss> misses;  // writes that failed on the way (publish.hpp)
};

class SingleFlight {
  public:
    // Every part must outlive this object; `config` names the helper, the
    // pool and the store directory (its locks/).
    SingleFlight(const Config& config, StoredTiers& stored, Publisher& publish, Workers& workers,
                 Counters& counters);
    SingleFlight(const SingleFlight&) = delete;
    SingleFlight& operator=(const SingleFlight&) = delete;

    // The compile of `plan` for the device `id`: a new one on a worker, or
    // the one already running for its key.
    std::shared_future<Compiled> start(const Plan& plan, const device_db::DeviceIdentity& id);
    // The same, building the SPIR-V module `il` of the plan's input (the IL
    // rung) instead of its source; a failure records the module as rejected.
    std::shared_future<Compiled> start_il(const Plan& plan, const device_db::DeviceIdentity& id,
                                          std::string il);
    // The compiles running now.
    std::vector<std::shared_future<Compiled>> running();
    // Waits until `until` for the warm-ups that follow answers (they store
    // and share what they built).
    void drain(SteadyClock::time_point until);
    // Waits for warm-ups, then stops every compile (killing its helper) and
    // joins every worker; compiles that end meanwhile record nothing.
    void close();

  private:
    Compiled compile_now(const Plan& plan, const compiler::JitRequest& request);
    std::shared_future<Compiled> launch(const Plan& plan, compiler::JitRequest request);
    Compiled failed(const Plan& plan, const compiler::JitError& e, std::chrono::microseconds took,
                    bool from_il);
    void helper_started(pid_t pid);
    void helper_done();

    const Config& config_;
    StoredTiers& stored_;
    Publisher& publish_;
    Workers& workers_;
    Counters& counters_;
    compiler::JitCompiler jit_;

    std::mutex mu_;  // guards everything below
    std::map<store::Key, std::shared_future<Compiled>> inflight_;
    std::set<pid_t> helpers_;  // process groups of running kcache-jit helpers
    bool closing_ = false;
};

}  // namespace kcache::service
