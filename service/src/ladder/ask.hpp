#pragma once
// One request on its way down the ladder: the caller's handles and request,
// the request signature, the outcome being written, and the plan, which the
// plan stage makes (plan_stage.cpp) when the walk gets past the in-process
// rung (a repeat hit there never makes it).

#include <cassert>
#include <memory>
#include <optional>
#include <string>

#include "identities.hpp"
#include "kcache/canary/canary.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/service/service_api.hpp"
#include "plan.hpp"

namespace kcache::service {

// What the caller asked for: one of the two requests, its budget (the
// request's deadline or the JIT timeout; the facade checked it is not
// negative) and when the request began, from which the plan's deadline is
// made without another clock read.
struct Wanted {
    const KernelRequest* kernel = nullptr;  // a registry kernel, or
    const SourceRequest* source = nullptr;  // the caller's own source
    std::chrono::milliseconds budget{0};
    SteadyClock::time_point started;
    Mode mode = Mode::blocking;
};

class Ask {
  public:
    Ask(cl_context c, cl_device_id d, const std::string& sig, Outcome& o, const Wanted& w)
        : context(c), device(d), signature(sig), out(o), wanted(w) {}
    Ask(const Ask&) = delete;
    Ask& operator=(const Ask&) = delete;

    const cl_context context;
    const cl_device_id device;
    const std::string& signature;  // the request as the caller gave it (request_signature)
    Outcome& out;                  // rungs add their misses; the one that answers fills the rest
    const Wanted& wanted;
    // The in-process rung found programs of this context here: the plan's
    // key may find one kept for another request (KeptByKeyRung).
    bool context_known = false;
    // A stored tier holds the exact entry, even if it could not be used (not
    // verified, rejected by the driver): the remote, which would hand back the
    // same binary, is not asked.
    bool entry_stored = false;

    // The plan, once the plan stage made it (null before, or when it could
    // not be made: then the walk has ended and `out` says why).
    Plan* plan() noexcept { return plan_.get(); }
    Plan& planned() noexcept {
        assert(plan_ != nullptr);
        return *plan_;
    }

    // The plan stage's: the plan it made or took from the memo (`fresh`: made
    // now, so the gates look at it; a memoized plan passed them when it was
    // made), and the registry variant a fresh plan of a kernel request is of.
    void set_plan(std::unique_ptr<Plan> plan, bool fresh) noexcept {
        plan_ = std::move(plan);
        fresh_ = fresh;
    }
    bool fresh() const noexcept { return fresh_; }
    std::optional<kernels::Variant> variant;
    FactsRef facts;  // the device's, with a fresh plan

    // The driver the gates ask about, made by the first gate that needs it
    // (canary_gate.cpp: gate_driver).
    std::optional<canary::DriverIdentity> driver;
    std::string driver_id;  // driver->id()

    // The plan, for the facade to keep after the walk (null when none was made).
    std::unique_ptr<Plan> take_plan() noexcept { return std::move(plan_); }

  private:
    std::unique_ptr<Plan> plan_;
    bool fresh_ = false;
};

}  // namespace kcache::service
