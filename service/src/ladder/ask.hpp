#pragma once
// One request on its way down the ladder: the caller's handles, the request
// signature, the outcome being written, and the plan, made at the first rung
// that needs one (a repeat hit in the in-process rung never makes it).

#include <cassert>
#include <string>

#include "kcache/service/service_api.hpp"
#include "plan.hpp"

namespace kcache::service {

class Ask {
  public:
    // `make_plan(ask)` returns the request's plan (owned by the caller, alive
    // until the walk ends), or null after writing why not into `ask.out`.
    template <class MakePlan>
    Ask(cl_context c, cl_device_id d, const std::string& sig, Outcome& o, MakePlan& make_plan)
        : context(c),
          device(d),
          signature(sig),
          out(o),
          make_(&make_plan),
          call_([](void* f, Ask& a) { return (*static_cast<MakePlan*>(f))(a); }) {}
    Ask(const Ask&) = delete;
    Ask& operator=(const Ask&) = delete;

    const cl_context context;
    const cl_device_id device;
    const std::string& signature;  // the request as the caller gave it (request_signature)
    Outcome& out;                  // rungs add their misses; the one that answers fills the rest
    // A stored tier holds the exact entry, even if it could not be used (not
    // verified, rejected by the driver): the remote, which would hand back the
    // same binary, is not asked.
    bool entry_stored = false;

    // The plan, made at the first call; null when it cannot be made (then
    // `out` holds only the status and the message saying why).
    Plan* plan() {
        if (!made_) {
            made_ = true;
            plan_ = call_(make_, *this);
        }
        return plan_;
    }
    // The plan, once plan() returned one.
    Plan& planned() {
        assert(plan_ != nullptr);
        return *plan_;
    }

  private:
    void* make_;
    Plan* (*call_)(void*, Ask&);
    bool made_ = false;
    Plan* plan_ = nullptr;
};

}  // namespace kcache::service
