#include "canary_gate.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "binary_vouch.hpp"
#include "kcache/cache/canary.hpp"
#include "kcache/cl/kat.hpp"
#include "kcache/common/log.hpp"

namespace kcache::service {
namespace {

// One driver's verdicts in this process; `once` makes the first request for
// the driver the one that reads or runs them, the others wait for it.
struct Known {
    std::once_flag once;
    canary::Record record;
    std::set<std::string> warned;  // variants already warned about (under `mu` of Gate)
};

struct Gate {
    std::mutex mu;
    std::map<std::string, std::shared_ptr<Known>> by_driver;  // store dir + identity id
};

Gate& gate() {
    static Gate g;
    return g;
}

// The driver's verdicts: stored under `config.dir`, else the canary's, run now
// (and stored unless the store is read-only).
canary::Record verdicts(const Config& config, const device_db::DeviceIdentity& device,
                        const canary::DriverIdentity& identity, remote::Client* remote) {
    const auto dir = config.dir.empty() ? std::filesystem::path() : canary::canary_dir(config.dir);
    if (!dir.empty()) {
        if (auto stored = canary::load_record(dir, identity)) {
            return std::move(*stored);
        }
    }
    canary::RunOptions options;
    options.helper = verify_helper_beside(config.jit_helper);
    options.seed = canary::fresh_seed();
    canary::Record record = canary::run_canary(device, canary::default_set(device), options);
    logging::warning("driver canary on " + identity.describe() + ": " +
                     std::to_string(record.verdicts.size()) + " variants in " +
                     std::to_string(record.wall_ms) + " ms (seed " + std::to_string(options.seed) +
                     ")" + (record.suspect() ? "; the driver is SUSPECT (kcache canary)" : ""));
    if (!dir.empty() && !config.read_only) {
        if (auto saved = canary::save_record(dir, record); !saved) {
            logging::warning("driver canary: verdicts kept for this process only: " +
                             saved.error());
        }
    }
    publish_findings(record, remote);  // other nodes apply them as errata
    return record;
}

std::string describe(const canary::Verdict& v) {
    return v.check + ": " + v.detail + " (seed " + std::to_string(v.seed) + ")";
}

}  // namespace

std::string apply_canary_policy(Config& c, const std::string& value) {
    for (CanaryPolicy p : {CanaryPolicy::off, CanaryPolicy::warn, CanaryPolicy::enforce}) {
        if (value == to_string(p)) {
            c.canary = p;
            return {};
        }
    }
    return "expected off, warn or enforce";
}

const char* to_string(CanaryPolicy policy) noexcept {
    switch (policy) {
        case CanaryPolicy::off:
            return "off";
        case CanaryPolicy::enforce:
            return "enforce";
        case CanaryPolicy::warn:
            break;
    }
    return "warn";
}

Outcome canary_gate(const Config& config, const device_db::DeviceIdentity& device,
                    const kernels::Variant& variant, const ErrataSources& sources) {
    Outcome ok;
    ok.status = StatusCode::ok;
    if (config.canary == CanaryPolicy::off) {
        return ok;
    }
    const canary::DriverIdentity identity = canary::driver_identity(device);
    std::shared_ptr<Known> known;
    {
        std::lock_guard g(gate().mu);
        auto& slot = gate().by_driver[config.dir.string() + "\n" + identity.id()];
        slot = slot ? slot : std::make_shared<Known>();
        known = slot;
    }
    const canary::Verdict* v = nullptr;
    if (cl::has_kat(variant.kernel)) {
        std::call_once(known->once,
                       [&] { known->record = verdicts(config, device, identity, sources.remote); });
        v = canary::verdict_for(known->record, variant);
    }
    std::string what;
    if (v != nullptr && v->state == canary::VerdictState::suspect) {
        what = "the driver canary found " + identity.describe() + " suspect for " + variant.id() +
               ": " + describe(*v);
    } else if (auto e = erratum_for(config, identity, variant, sources)) {
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
