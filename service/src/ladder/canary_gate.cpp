#include "canary_gate.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "canary_verdicts.hpp"
#include "kcache/canary/canary.hpp"
#include "kcache/cl/kat.hpp"
#include "kcache/common/fork.hpp"
#include "kcache/common/log.hpp"
#include "kcache/observe/trace.hpp"
#include "stored_tiers.hpp"

namespace kcache::service {
namespace {

// One driver's variants already warned about in this process (under `mu` of Gate).
struct WarnedFor {
    std::set<std::string> warned;
};

struct Gate {
    std::mutex mu;
    std::map<std::string, std::shared_ptr<WarnedFor>> by_driver;  // store dir + identity id
};

// This process's (a forked child starts afresh: fork.hpp).
Gate& gate() {
    static fork_safety::PerProcess<Gate> g;
    return g.get();
}

std::string describe(const canary::Verdict& v) {
    return v.check + ": " + v.detail + " (seed " + std::to_string(v.seed) + ")";
}

}  // namespace

Outcome canary_gate(const Config& config, const device_db::DeviceIdentity& device,
                    const kernels::Variant& variant, const ErrataSources& sources,
                    Workers* background) {
    Outcome ok;
    ok.status = StatusCode::ok;
    if (config.canary == CanaryPolicy::off) {
        return ok;
    }
    const canary::DriverIdentity identity = canary::driver_identity(device);
    const std::string identity_id = identity.id();  // once, for both gates
    const DriverRef driver{identity, identity_id};
    std::shared_ptr<WarnedFor> known;
    {
        std::lock_guard g(gate().mu);
        auto& slot = gate().by_driver[config.dir.string() + "\n" + identity_id];
        slot = slot ? slot : std::make_shared<WarnedFor>();
        known = slot;
    }
    std::shared_ptr<const canary::Record> record;
    const canary::Verdict* v = nullptr;
    if (cl::has_kat(variant.kernel)) {
        trace::Span span("canary gate", "gate");  // the errata's gate is a span of its own
        // Suspect findings are published for other nodes to apply as errata.
        const CanaryParts parts{
            sources.stored != nullptr ? sources.stored->user() : nullptr, background,
            [remote = sources.remote](const canary::Record& r) { publish_findings(r, remote); }};
        record = driver_verdicts(config, device, driver, parts);
        v = record ? canary::verdict_for(*record, variant) : nullptr;
    }
    std::string what;
    if (v != nullptr && v->state == canary::VerdictState::suspect) {
        what = "the driver canary found " + identity.describe() + " suspect for " + variant.id() +
               ": " + describe(*v);
    } else if (auto e = erratum_for(config, driver, variant, sources)) {
        what = "erratum " + e->id() + " (" + (e->source.empty() ? "a pack" : e->source) +
               ") marks " + identity.describe() + " suspect for " + variant.id() + ": " +
               e->describe();
    } else {
        return ok;
    }
    if (config.canary == CanaryPolicy::enforce) {
        Outcome suspect;
        suspect.status = StatusCode::driver_suspect;
        suspect.message = what + "; not served (KCACHE_CANARY=enforce)";
        return suspect;
    }
    bool first = false;
    {
        std::lock_guard g(gate().mu);
        first = known->warned.insert(variant.id()).second;
    }
    if (first) {
        logging::warning(what + "; served anyway (KCACHE_CANARY=warn)");
    }
    return ok;
}

}  // namespace kcache::service
