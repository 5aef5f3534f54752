// The canary's gate and what both gates do with a suspect finding
// (canary_gate.hpp).

#include "canary_gate.hpp"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "errata_gate.hpp"
#include "kcache/cl/kat.hpp"
#include "kcache/common/fork.hpp"
#include "kcache/common/log.hpp"
#include "rungs.hpp"

namespace kcache::service {
namespace {

// The variants already warned about in this process, by store directory
// and driver identity.
struct Warned {
    std::mutex mu;
    std::map<std::string, std::set<std::string>> by_driver;
};

// This process's (a forked child starts afresh: fork.hpp).
Warned& warned() {
    static fork_safety::PerProcess<Warned> w;
    return w.get();
}

std::string describe(const canary::Verdict& v) {
    return v.check + ": " + v.detail + " (seed " + std::to_string(v.seed) + ")";
}

}  // namespace

bool gated(const Config& config, const Ask& ask) noexcept {
    return config.canary != CanaryPolicy::off && ask.fresh() && ask.variant.has_value();
}

DriverRef gate_driver(Ask& ask) {
    if (!ask.driver) {
        ask.driver = canary::driver_identity(*ask.facts->id);
        ask.driver_id = ask.driver->id();
    }
    return DriverRef{*ask.driver, ask.driver_id};
}

void warn_once(const Config& config, const std::string& driver_id, const std::string& variant_id,
               const std::string& what) {
    bool first = false;
    {
        Warned& w = warned();
        std::lock_guard g(w.mu);
        first = w.by_driver[config.dir.string() + "\n" + driver_id].insert(variant_id).second;
    }
    if (first) {
        logging::warning(what + "; served anyway (KCACHE_CANARY=warn)");
    }
}

Step suspect_found(Ask& ask, const std::string& what) {
    ask.take_plan();  // dropped: a plan kept would pass the gates unasked
    ask.out = Outcome{};
    ask.out.status = StatusCode::driver_suspect;
    ask.out.message = what + "; not served (KCACHE_CANARY=enforce)";
    return Step::answered();
}

std::string canary_finding(const RungParts& parts, const device_db::DeviceIdentity& device,
                           const DriverRef& driver, const kernels::Variant& variant) {
    if (!cl::has_kat(variant.kernel)) {
        return {};
    }
    // Suspect findings are published for other nodes to apply as errata.
    const CanaryParts canary_parts{
        parts.stored.user(),
        [remote = parts.remote](const canary::Record& r) { publish_findings(r, remote); }};
    const std::shared_ptr<const canary::Record> record =
        driver_verdicts(parts.config, device, driver, canary_parts);
    const canary::Verdict* v = record ? canary::verdict_for(*record, variant) : nullptr;
    if (v == nullptr || v->state != canary::VerdictState::suspect) {
        return {};
    }
    return "the driver canary found " + driver.identity.describe() + " suspect for " +
           variant.id() + ": " + describe(*v);
}

void gate_later(const RungParts& parts, Ask& ask) {
    std::function<void()> gates = [&parts, facts = ask.facts, variant = *ask.variant] {
        try {
            const canary::DriverIdentity identity = canary::driver_identity(*facts->id);
            const std::string id = identity.id();
            const DriverRef driver{identity, id};
            std::string what = canary_finding(parts, *facts->id, driver, variant);
            if (what.empty()) {
                what = errata_finding(parts, driver, variant);
            }
            if (!what.empty()) {
                warn_once(parts.config, id, variant.id(), what);
            }
        } catch (const std::exception& e) {  // only std::bad_alloc is expected
            logging::warning(std::string("driver canary: the gates did not run: ") + e.what());
        }
    };
    if (!parts.workers.start(gates)) {
        gates();  // the cache is closing: here, then
    }
}

Step CanaryGate::attempt(Ask& ask) {
    if (!gated(parts_.config, ask)) {
        return Step::miss();
    }
    if (parts_.config.canary != CanaryPolicy::enforce) {
        gate_later(parts_, ask);  // warn: both gates, after the answer they cannot change
        return Step::miss();
    }
    const DriverRef driver = gate_driver(ask);
    const std::string what = canary_finding(parts_, *ask.facts->id, driver, *ask.variant);
    return what.empty() ? Step::miss() : suspect_found(ask, what);
}

}  // namespace kcache::service
