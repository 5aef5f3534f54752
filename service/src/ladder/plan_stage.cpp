// The plan stage: what the rungs below look up, compile and load, made once
// per (device, request) and kept in the plan memo for new contexts; the
// request's deadline and mode applied on every walk.

#include "kcache/common/deadline.hpp"
#include "kcache/common/serial_calls.hpp"
#include "kcache/kernels/registry.hpp"
#include "rungs.hpp"

namespace kcache::service {
namespace {

// The request cannot be planned: the outcome is only why.
Step refused(Ask& ask, StatusCode s, std::string message) {
    ask.out = Outcome{};
    ask.out.status = s;
    ask.out.message = std::move(message);
    return Step::answered();
}

// Applies the device's facts (its identity and quirks, made once per root
// device: Identities::facts_of) to `plan`: everything but the compile input
// and the deadline. Returns the facts, or null after writing why not.
FactsRef prepare(const RungParts& parts, Ask& ask, Plan& plan) {
    auto found = parts.identities.facts_of(ask.device, parts.db);
    if (!found) {
        refused(ask, StatusCode::device_error, found.error());
        return nullptr;
    }
    FactsRef facts = std::move(*found);
    const device_db::QuirkDecision& quirks = facts->quirks;
    if (quirks.deny) {
        refused(ask, StatusCode::unsupported,
                "device denied by quirk rule " + (quirks.rules.empty() ? "" : quirks.rules[0]->id));
        return nullptr;
    }
    if (quirks.jit_timeout_ms) {
        plan.budget_cap = std::chrono::milliseconds(*quirks.jit_timeout_ms);
    }
    plan.use_stored = !quirks.no_cached_binaries;
    plan.verified_only = quirks.verify_before_use;
    if (quirks.serialize_loads) {
        serial_calls::turn_on();  // this process's loads and releases, one at a time
    }
    plan.aot_target = facts->aot_target;
    plan.platform = facts->platform;  // null: the in-process rung asks again
    plan.root_device = facts->root;
    return facts;
}

// The key: the device's half of the fields (made once) and the input's;
// the key record serialized once, for the key and the hot copy's read.
void finish(Plan& plan, const DeviceFacts& facts) {
    plan.fields = facts.jit_fields;
    device_db::set_input_fields(plan.fields, plan.input);
    plan.key_record = store::serialize_key_fields(plan.fields);
    plan.key = store::Key{sha256(plan.key_record)};
}

// A registry kernel's plan: the variant (kept in `ask` for the gates), the
// device's support of it, its rendered source and options.
bool resolve(const RungParts& parts, Ask& ask, const KernelRequest& request, Plan& plan) {
    kernels::Params params(request.params.begin(), request.params.end());
    auto variant = kernels::make_variant(request.kernel, params);
    if (!variant) {
        refused(ask,
                variant.error().code == kernels::KernelErrc::unknown_kernel
                    ? StatusCode::unknown_kernel
                    : StatusCode::invalid_argument,
                variant.error().message);
        return false;
    }
    const FactsRef facts = prepare(parts, ask, plan);
    if (facts == nullptr) {
        return false;
    }
    if (auto sup = kernels::check_support(*variant, facts->id->extensions); !sup) {
        refused(ask, StatusCode::unsupported, sup.error().message);
        return false;
    }
    auto rendered = kernels::render(*variant);
    if (!rendered) {
        refused(ask, StatusCode::invalid_argument, rendered.error().message);
        return false;
    }
    plan.input = {variant->id(), rendered->source, rendered->options, rendered->entry_points};
    plan.warmup_local_size = rendered->local_size;
    finish(plan, *facts);
    ask.variant = std::move(*variant);
    ask.facts = facts;
    return true;
}

// The caller's own source: taken as it is (no AOT: packs hold registry
// kernels only).
bool resolve(const RungParts& parts, Ask& ask, const SourceRequest& request, Plan& plan) {
    if (request.source.empty()) {
        refused(ask, StatusCode::invalid_argument, "empty kernel source");
        return false;
    }
    const FactsRef facts = prepare(parts, ask, plan);
    if (facts == nullptr) {
        return false;
    }
    plan.input = {request.name, request.source, request.options, request.entry_points};
    plan.input.link = request.link;
    plan.warmup_local_size = request.warmup_local_size;
    plan.aot_target.reset();
    finish(plan, *facts);
    return true;
}

}  // namespace

Step PlanStage::attempt(Ask& ask) {
    std::unique_ptr<Plan> plan = parts_.plans.take(ask.device, ask.signature);
    const bool fresh = plan == nullptr;
    std::string why;
    if (!parts_.loader.device_in_context(ask.context, ask.device, why)) {
        ask.set_plan(std::move(plan), fresh);  // a memoized plan goes back
        return refused(ask, StatusCode::invalid_argument, why);
    }
    if (fresh) {
        plan = std::make_unique<Plan>();
        const Wanted& w = ask.wanted;
        if (!(w.kernel != nullptr ? resolve(parts_, ask, *w.kernel, *plan)
                                  : resolve(parts_, ask, *w.source, *plan))) {
            return Step::answered();  // `ask.out` says why; the plan is dropped
        }
    }
    const Wanted& w = ask.wanted;
    plan->budget = plan->budget_cap ? std::min(w.budget, *plan->budget_cap) : w.budget;
    plan->deadline = deadline_after<SteadyClock>(w.started, plan->budget);  // no clock read
    plan->mode = w.mode;
    ask.out.key = plan->key.hex();
    ask.set_plan(std::move(plan), fresh);
    return Step::miss();
}

}  // namespace kcache::service
