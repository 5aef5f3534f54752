// The errata a process applies, per store directory and driver identity:
// the node's file (re-read when it changes), the packs' and the remote's
// (fetched once per breaker window, kept in the node's file).

#include "errata_gate.hpp"

#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "canary_gate.hpp"
#include "kcache/common/file_stamp.hpp"
#include "kcache/common/fork.hpp"
#include "kcache/common/log.hpp"
#include "rungs.hpp"
#include "stored_tiers.hpp"

namespace kcache::service {
namespace {

using Clock = std::chrono::steady_clock;

// One driver's errata in this process (under `mu`; a request for the driver
// waits while another reads the file or asks the remote).
struct DriverErrata {
    std::mutex mu;
    std::optional<FileStamp> stamp;  // of the node's file as last read
    std::vector<errata::Erratum> local;
    std::vector<errata::Erratum> fetched;  // the remote's, when not kept in the file
    Clock::time_point next_fetch = Clock::time_point::min();
};

struct AllErrata {
    std::mutex mu;
    std::map<std::string, std::shared_ptr<DriverErrata>> by_driver;  // store dir + identity id
};

std::shared_ptr<DriverErrata> slot_for(const Config& config, const std::string& driver_id) {
    static fork_safety::PerProcess<AllErrata> per_process;  // a forked child starts afresh
    AllErrata& all = per_process.get();
    std::lock_guard g(all.mu);
    auto& slot = all.by_driver[config.dir.string() + "\n" + driver_id];
    slot = slot ? slot : std::make_shared<DriverErrata>();
    return slot;
}

// Reads the node's file again when it changed since the last read (one
// that stat() found missing is not opened: the stamp of a file made since
// differs at the next call).
void refresh_local(const Config& config, DriverErrata& known) {
    if (config.dir.empty()) {
        return;
    }
    const std::filesystem::path file = errata::errata_dir(config.dir) / "errata.json";
    const FileStamp now = stamp_of(file);
    const bool missing = !now.exists && errno == ENOENT;
    if (known.stamp && *known.stamp == now) {
        return;
    }
    known.stamp = now;
    if (missing) {
        known.local.clear();
        return;
    }
    auto loaded = errata::load_local(config.dir);
    if (!loaded) {
        logging::warning("errata: " + loaded.error().message + "; its errata are not applied");
        known.local.clear();
        return;
    }
    known.local = std::move(*loaded);
}

// Asks the remote for the driver's errata when the breaker window passed.
void refresh_remote(const Config& config, const canary::DriverIdentity& d, DriverErrata& known,
                    remote::Client& client) {
    const auto now = Clock::now();
    if (now < known.next_fetch) {
        return;
    }
    known.next_fetch = now + config.remote_breaker_window;
    auto fetched = errata::fetch_remote(client, d);
    if (!fetched || fetched->empty()) {
        return;  // the client counted and reported a failure; the window paces the retries
    }
    if (!config.dir.empty() && !config.read_only) {
        auto added = errata::add_local(config.dir, *fetched, "remote tier");
        if (added) {
            known.stamp.reset();  // read the file again now
            return;
        }
        logging::warning("errata: the remote's errata for " + d.describe() +
                         " are applied in this process only: " + added.error().message);
    }
    errata::merge(known.fetched, *fetched);
}

}  // namespace

std::optional<errata::Erratum> erratum_for(const Config& config, const DriverRef& driver,
                                           const kernels::Variant& variant,
                                           const ErrataSources& sources) {
    const std::shared_ptr<DriverErrata> known = slot_for(config, driver.id);
    std::lock_guard g(known->mu);
    if (sources.remote != nullptr) {
        refresh_remote(config, driver.identity, *known, *sources.remote);
    }
    refresh_local(config, *known);
    for (const auto* list : {&known->local, &known->fetched}) {
        if (const errata::Erratum* e = errata::covering(*list, driver.identity, variant)) {
            return *e;
        }
    }
    if (sources.stored != nullptr) {
        sources.stored->with_packs();
        if (const errata::Erratum* e =
                errata::covering(sources.stored->pack_errata(), driver.identity, variant)) {
            return *e;
        }
    }
    return std::nullopt;
}

std::string errata_finding(const RungParts& parts, const DriverRef& driver,
                           const kernels::Variant& variant) {
    const auto e = erratum_for(parts.config, driver, variant, {&parts.stored, parts.remote});
    if (!e) {
        return {};
    }
    return "erratum " + e->id() + " (" + (e->source.empty() ? "a pack" : e->source) + ") marks " +
           driver.identity.describe() + " suspect for " + variant.id() + ": " + e->describe();
}

Step ErrataGate::attempt(Ask& ask) {
    if (!gated(parts_.config, ask) || parts_.config.canary != CanaryPolicy::enforce) {
        return Step::miss();  // under warn the canary's gate ran both, after the answer
    }
    const std::string what = errata_finding(parts_, gate_driver(ask), *ask.variant);
    return what.empty() ? Step::miss() : suspect_found(ask, what);
}

void publish_findings(const canary::Record& record, remote::Client* remote) {
    const std::vector<errata::Erratum> found = errata::from_record(record);
    if (remote == nullptr || found.empty()) {
        return;
    }
    if (auto sent = errata::publish_remote(*remote, record.identity, found); !sent) {
        logging::warning("errata: the canary's findings on " + record.identity.describe() +
                         " were not published to the remote tier: " + sent.error());
    }
}

}  // namespace kcache::service
