// The driver canary's verdicts at run time (canary_verdicts.hpp): one slot
// per store and driver identity in the process; the first request fills it.

#include "canary_verdicts.hpp"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>

#include "kcache/canary/binary_vouch.hpp"
#include "kcache/common/fork.hpp"
#include "kcache/common/key_lock.hpp"
#include "kcache/common/log.hpp"

namespace kcache::service {
namespace {

// How long a process waits for another one's canary of the same driver
// before it runs its own: longer than a canary that ends at its deadlines.
constexpr std::chrono::minutes kLockWait{2};

// One driver's verdicts in this process.
struct Known {
    std::mutex mu;
    std::condition_variable filled;
    bool started = false;  // a request has begun reading or running them (under `mu`)
    std::shared_ptr<const canary::Record> record;  // set once (under `mu`)
};

std::shared_ptr<Known> slot(const Config& config, const std::string& identity_id) {
    struct Drivers {
        std::mutex mu;
        std::map<std::string, std::shared_ptr<Known>> by_driver;  // store dir + identity id
    };
    static fork_safety::PerProcess<Drivers> per_process;  // a forked child starts afresh
    Drivers& drivers = per_process.get();
    std::lock_guard g(drivers.mu);
    auto& known = drivers.by_driver[config.dir.string() + "\n" + identity_id];
    known = known ? known : std::make_shared<Known>();
    return known;
}

std::string suspects_of(const canary::Record& record) {
    std::string list;
    for (const canary::Verdict& v : record.verdicts) {
        if (v.state == canary::VerdictState::suspect) {
            list += (list.empty() ? "" : ", ") + v.variant + " (" + v.check + ")";
        }
    }
    return list;
}

// Runs the canary of the driver and keeps its record (unless read-only).
canary::Record run_now(const Config& config, const device_db::DeviceIdentity& device,
                       const std::filesystem::path& dir, const CanaryParts& parts,
                       canary::Priority priority) {
    canary::RunOptions options;
    options.priority = priority;
    options.helper = verify_helper_beside(config.jit_helper);
    options.seed = canary::fresh_seed();
    // One variant is a compile and a short test: no longer than a compile may take.
    if (config.jit_timeout.count() > 0) {
        options.timeout = std::min(options.timeout, config.jit_timeout);
    }
    const auto set = canary::default_set(device);
    const canary::PreviousBinaries previous =
        parts.store != nullptr ? canary::previous_binaries(*parts.store, device, set, dir)
                               : canary::PreviousBinaries{};
    canary::Record record = canary::run_canary(device, set, options, previous);
    const std::string suspects = suspects_of(record);
    // Validated is news for whoever asks (info); a suspect driver is a warning.
    logging::write(
        suspects.empty() ? logging::Level::info : logging::Level::warning,
        "driver canary on " + record.identity.describe() + ": " +
            std::to_string(record.verdicts.size()) + " variants (" +
            std::to_string(previous.size()) + " with an earlier driver's binary) in " +
            std::to_string(record.wall_ms) + " ms (seed " + std::to_string(options.seed) + ")" +
            (suspects.empty()
                 ? std::string()
                 : "; the driver is SUSPECT for " + suspects + " (kcache canary --show)"));
    if (!dir.empty() && !config.read_only) {
        if (auto saved = canary::save_record(dir, record); !saved) {
            logging::warning("driver canary: verdicts kept for this process only: " +
                             saved.error());
        }
    }
    if (parts.on_run) {
        parts.on_run(record);
    }
    return record;
}

// The driver's verdicts: stored under `config.dir`, else the canary's, run
// now by this process or, while another one holds the driver's lock, by that
// one (then read from its record). `identity_id`: the id of the device's
// driver identity.
canary::Record obtain(const Config& config, const device_db::DeviceIdentity& device,
                      const std::string& identity_id, const CanaryParts& parts,
                      canary::Priority priority) {
    if (config.dir.empty()) {
        return run_now(config, device, {}, parts, priority);
    }
    const canary::DriverIdentity identity = canary::driver_identity(device);
    const auto dir = canary::canary_dir(config.dir);
    if (auto stored = canary::load_record(dir, identity, identity_id)) {
        return std::move(*stored);
    }
    std::optional<KeyLock> lock;
    if (!config.read_only) {
        if (auto held = KeyLock::acquire(config.dir, "canary-" + identity_id,
                                         std::chrono::steady_clock::now() + kLockWait)) {
            lock.emplace(std::move(*held));
            if (auto stored = canary::load_record(dir, identity, identity_id)) {
                return std::move(*stored);
            }
        }
    }
    return run_now(config, device, dir, parts, priority);
}

}  // namespace

std::shared_ptr<const canary::Record> driver_verdicts(const Config& config,
                                                      const device_db::DeviceIdentity& device,
                                                      const DriverRef& driver,
                                                      const CanaryParts& parts) {
    const std::shared_ptr<Known> known = slot(config, driver.id);
    std::unique_lock lock(known->mu);
    if (!known->started) {
        known->started = true;
        lock.unlock();
        // Under warn this runs after the answer, on a worker (canary_gate.hpp).
        const auto priority = config.canary == CanaryPolicy::warn ? canary::Priority::background
                                                                  : canary::Priority::normal;
        std::shared_ptr<const canary::Record> record;
        try {
            record = std::make_shared<const canary::Record>(
                obtain(config, device, driver.id, parts, priority));
        } catch (const std::exception& e) {  // only std::bad_alloc is expected
            logging::warning(std::string("driver canary: no verdicts: ") + e.what());
            record = std::make_shared<const canary::Record>();
        }
        lock.lock();
        known->record = std::move(record);
        known->filled.notify_all();
    }
    known->filled.wait(lock, [&] { return known->record != nullptr; });
    return known->record;
}

}  // namespace kcache::service
