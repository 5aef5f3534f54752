// A SourceRequest's own known-answer test at run time (canary_kat.hpp): the
// verdict of the process, else the store's, else a run of kcache-verify on
// the binary being served (kept for later processes); then the policy.

#include "canary_kat.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "kcache/canary/binary_vouch.hpp"
#include "kcache/canary/canary.hpp"
#include "kcache/common/fork.hpp"
#include "kcache/common/key_lock.hpp"
#include "kcache/common/log.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/common/sha256.hpp"

namespace kcache::service {
namespace {

constexpr std::size_t kMaxKatFileBytes = std::size_t{16} << 20;
// How long a process waits for another one's run of the same test before it
// runs its own: longer than a test that ends at its deadline.
constexpr std::chrono::minutes kKatLockWait{2};

// One test in this process (a store, a binary key, a KAT file, with or
// without a reference).
struct KatSlot {
    std::mutex mu;  // held while the test runs: one run per test in the process
    std::optional<canary::Verdict> verdict;
    std::string driver;   // the driver it ran on, described for messages
    bool warned = false;  // its one warning logged (under `mu`)
};

std::shared_ptr<KatSlot> kat_slot(const std::string& id) {
    struct Slots {
        std::mutex mu;
        std::map<std::string, std::shared_ptr<KatSlot>> by_id;
    };
    static fork_safety::PerProcess<Slots> per_process;  // a forked child starts afresh
    Slots& slots = per_process.get();
    std::lock_guard g(slots.mu);
    auto& slot = slots.by_id[id];
    slot = slot ? slot : std::make_shared<KatSlot>();
    return slot;
}

Outcome kat_outcome(StatusCode status, std::string message) {
    Outcome o;
    o.status = status;
    o.message = std::move(message);
    return o;
}

std::string kat_name(const SourceRequest& request) {
    return request.name.empty() ? std::string("source") : request.name;
}

// The directory of the test's verdicts; empty without a store.
std::filesystem::path kat_dir(const Config& config, const std::string& key_hex,
                              const std::string& kat_text, bool reference) {
    if (config.dir.empty()) {
        return {};
    }
    const std::string id =
        sha256_hex(key_hex + '\n' + (reference ? "reference" : "file") + '\n' + kat_text);
    return canary::canary_dir(config.dir) / "kat" / id.substr(0, 16);
}

// Runs the test on the served binary: the verdict, or an outcome saying why
// the test cannot be used.
Result<canary::Verdict, Outcome> run_kat(const Config& config, const SourceRequest& request,
                                         const KatServed& served,
                                         const device_db::DeviceIdentity& device,
                                         const std::string& kat_text) {
    std::optional<KatTempFile> computed;
    if (request.kat_reference) {
        auto text = kat_with_reference(kat_text, request.kat_reference);
        auto file = text ? KatTempFile::write(config.tmpdir, *text)
                         : Result<KatTempFile, std::string>(fail(text.error()));
        if (!file) {
            return fail(kat_outcome(StatusCode::invalid_argument,
                                    "KAT file " + request.kat.string() + ": " + file.error()));
        }
        computed.emplace(std::move(*file));
    }
    auto binary = served.binary_of(served.program);
    if (!binary) {
        return fail(kat_outcome(StatusCode::device_error, binary.error()));
    }
    canary::RunOptions options;
    options.helper = verify_helper_beside(config.jit_helper);
    if (config.jit_timeout.count() > 0) {  // a build and a short test: no longer than a compile
        options.timeout = std::min(options.timeout, config.jit_timeout);
    }
    canary::Verdict v =
        canary::run_caller_kat(device, kat_name(request), computed ? computed->path() : request.kat,
                               *binary, request.options, options);
    if (v.state == canary::VerdictState::not_run && v.check == "kat_file") {
        return fail(kat_outcome(StatusCode::invalid_argument,
                                "KAT file " + request.kat.string() + ": " + v.detail));
    }
    return v;
}

// Keeps `v` for later processes (a verdict of a test that ran).
void keep_verdict(const Config& config, const std::filesystem::path& dir,
                  const canary::DriverIdentity& identity, const canary::Verdict& v) {
    if (dir.empty() || config.read_only || v.state == canary::VerdictState::not_run) {
        return;
    }
    (void)::mkdir(canary::canary_dir(config.dir).c_str(), 0700);
    canary::Record record{identity, v.seed, static_cast<std::int64_t>(std::time(nullptr)), 0, {v}};
    if (auto saved = canary::save_record(dir, record); !saved) {
        logging::warning("known-answer test of " + v.variant +
                         ": verdict kept for this process only: " + saved.error());
    }
}

// The test's verdict on the served binary: stored, else run now (by this
// process, or by another one holding the test's lock, then read).
Result<canary::Verdict, Outcome> obtain_kat(const Config& config, const SourceRequest& request,
                                            const KatServed& served, std::string& driver) {
    auto text = read_regular_file(request.kat, kMaxKatFileBytes);
    if (!text) {
        return fail(kat_outcome(StatusCode::invalid_argument,
                                "cannot read the KAT file: " + text.error().message));
    }
    auto device = served.identity_of(served.device);
    if (!device) {
        return fail(kat_outcome(StatusCode::device_error, device.error()));
    }
    const canary::DriverIdentity identity = canary::driver_identity(**device);
    driver = identity.describe();
    const auto dir = kat_dir(config, served.key_hex, *text, bool(request.kat_reference));
    const auto stored = [&]() -> std::optional<canary::Verdict> {
        auto record = dir.empty() ? std::nullopt : canary::load_record(dir, identity);
        if (!record || record->verdicts.size() != 1) {
            return std::nullopt;
        }
        return record->verdicts[0];
    };
    if (auto v = stored()) {
        return std::move(*v);
    }
    std::optional<KeyLock> lock;
    if (!dir.empty() && !config.read_only) {
        if (auto held = KeyLock::acquire(config.dir, "kat-" + dir.filename().string(),
                                         std::chrono::steady_clock::now() + kKatLockWait)) {
            lock.emplace(std::move(*held));
            if (auto v = stored()) {
                return std::move(*v);
            }
        }
    }
    auto v = run_kat(config, request, served, **device, *text);
    if (v) {
        keep_verdict(config, dir, identity, *v);
    }
    return v;
}

// What the policy makes of `v` (see caller_kat_gate).
Outcome apply_kat_policy(const Config& config, const SourceRequest& request, KatSlot& slot,
                         const canary::Verdict& v) {
    if (v.state == canary::VerdictState::validated) {
        return kat_outcome(StatusCode::ok, "");
    }
    std::string what = "the known-answer test " + request.kat.filename().string() + " of " +
                       kat_name(request) + " on " + slot.driver;
    if (v.state == canary::VerdictState::suspect) {
        what += " found the driver suspect: " + v.check + ": " + v.detail;
        if (config.canary == CanaryPolicy::enforce) {
            return kat_outcome(StatusCode::driver_suspect,
                               what + "; not served (KCACHE_CANARY=enforce)");
        }
        what += "; served anyway (KCACHE_CANARY=warn)";
    } else {
        what += " did not run (" + v.check + "): " + v.detail + "; served untested";
    }
    if (!std::exchange(slot.warned, true)) {
        logging::warning(what);
    }
    return kat_outcome(StatusCode::ok, "");
}

}  // namespace

Outcome caller_kat_gate(const Config& config, const SourceRequest& request,
                        const KatServed& served) {
    if (config.canary == CanaryPolicy::off) {
        return kat_outcome(StatusCode::ok, "");
    }
    if (request.kat.empty()) {
        return kat_outcome(StatusCode::invalid_argument, "a KAT reference needs a KAT file (kat)");
    }
    // Every answer names its key; should one not, the binary's digest stands in.
    std::string key = served.key_hex;
    if (key.empty()) {
        auto binary = served.binary_of(served.program);
        if (!binary) {
            return kat_outcome(StatusCode::device_error, binary.error());
        }
        key =
            "binary:" + sha256_hex({reinterpret_cast<const char*>(binary->data()), binary->size()});
    }
    const KatServed keyed{key, served.device, served.program, served.identity_of, served.binary_of};
    const std::shared_ptr<KatSlot> slot =
        kat_slot(config.dir.string() + '\n' + key + '\n' + request.kat.string() +
                 (request.kat_reference ? "\nreference" : "\nfile"));
    std::lock_guard g(slot->mu);
    if (!slot->verdict) {
        auto v = obtain_kat(config, request, keyed, slot->driver);
        if (!v) {
            return v.error();  // not kept: a repaired file is read again
        }
        slot->verdict = std::move(*v);
    }
    return apply_kat_policy(config, request, *slot, *slot->verdict);
}

}  // namespace kcache::service
