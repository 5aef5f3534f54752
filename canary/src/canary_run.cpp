// Running the canary: the default set of variants, and one kcache-verify
// (--canary) per variant under the watchdog, several at once.

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <random>
#include <thread>

#include "kcache/canary/canary.hpp"
#include "kcache/cl/kat.hpp"
#include "kcache/common/work.hpp"
#include "kcache/compiler/subprocess.hpp"

namespace kcache::canary {
namespace {

// The niceness of a canary nobody waits for, set as soon as each helper is
// started (before its driver is loaded, whose threads inherit it).
constexpr int kBackgroundNice = 10;

// The largest "max error X" of a KAT's detail.
std::optional<double> max_error_in(const std::string& detail) {
    constexpr std::string_view kTag = "max error ";
    std::optional<double> worst;
    for (std::size_t at = detail.find(kTag); at != std::string::npos;
         at = detail.find(kTag, at + 1)) {
        const char* begin = detail.c_str() + at + kTag.size();
        char* end = nullptr;
        const double value = std::strtod(begin, &end);
        if (end != begin && (!worst || value > *worst)) {
            worst = value;
        }
    }
    return worst;
}

Verdict verdict(const std::string& id, VerdictState state, std::string check, std::uint32_t seed,
                std::optional<double> max_error, std::string detail) {
    Verdict v;
    v.variant = id;
    v.state = state;
    v.check = std::move(check);
    v.seed = seed;
    v.max_error = max_error;
    v.detail = std::move(detail);
    return v;
}

// The verdict of the helper's reply line "id TAB state TAB detail".
Verdict from_line(const std::string& id, const std::string& line, std::uint32_t seed) {
    const std::size_t tab1 = line.find('\t');
    const std::size_t tab2 = tab1 == std::string::npos ? tab1 : line.find('\t', tab1 + 1);
    if (tab2 == std::string::npos || line.substr(0, tab1) != id) {
        return verdict(id, VerdictState::not_run, "error", seed, std::nullopt,
                       "kcache-verify replied \"" + line + "\"");
    }
    const std::string state = line.substr(tab1 + 1, tab2 - tab1 - 1);
    std::string detail = line.substr(tab2 + 1);
    const std::optional<double> max_error = max_error_in(detail);
    if (state == cl::to_string(cl::KatState::passed)) {
        return verdict(id, VerdictState::validated, "", seed, max_error, std::move(detail));
    }
    if (state == cl::to_string(cl::KatState::failed)) {
        std::string check = detail.substr(0, detail.find(": "));
        return verdict(id, VerdictState::suspect, std::move(check), seed, max_error,
                       std::move(detail));
    }
    return verdict(id, VerdictState::not_run, state == "unsupported" ? state : "no_kat", seed,
                   std::nullopt, std::move(detail));
}

// The differential check's reply line "id TAB differential TAB result TAB
// max-difference TAB detail"; nullopt when `line` is not one.
std::optional<Differential> differential_of(const std::string& id, const std::string& line,
                                            const std::string& driver) {
    std::vector<std::string> parts;
    for (std::size_t at = 0; parts.size() < 4;) {
        const std::size_t tab = line.find('\t', at);
        if (tab == std::string::npos) {
            return std::nullopt;
        }
        parts.push_back(line.substr(at, tab - at));
        at = tab + 1;
        if (parts.size() == 4) {
            parts.push_back(line.substr(at));
        }
    }
    if (parts[0] != id || parts[1] != "differential") {
        return std::nullopt;
    }
    Differential d{driver, parts[2], std::nullopt, parts[4]};
    if (parts[3] != "-") {
        d.max_difference = std::strtod(parts[3].c_str(), nullptr);
    }
    return d;
}

// The verdict when kcache-verify ended in `r` without a reply line.
Verdict without_reply(const std::string& id, const compiler::RunResult& r,
                      const RunOptions& options) {
    switch (r.outcome) {
        case compiler::ChildExit::timed_out:
            return verdict(id, VerdictState::suspect, "timeout", options.seed, std::nullopt,
                           "the canary did not finish within " +
                               std::to_string(options.timeout.count()) +
                               " ms; kcache-verify was killed");
        case compiler::ChildExit::signaled:
            return verdict(
                id, VerdictState::suspect, "crashed", options.seed, std::nullopt,
                "the canary crashed kcache-verify (signal " + std::to_string(r.signal) + ")");
        case compiler::ChildExit::spawn_failed:
            return verdict(id, VerdictState::not_run, "error", options.seed, std::nullopt,
                           "cannot start " + options.helper + ": " +
                               std::error_code(r.spawn_errno, std::generic_category()).message());
        case compiler::ChildExit::exited:
            break;
    }
    const std::string err = r.err.substr(0, r.err.find('\n'));
    if (r.exit_code == 2 || r.exit_code == 64) {  // device absent, usage: nothing learnt
        return verdict(id, VerdictState::not_run, r.exit_code == 2 ? "no_device" : "error",
                       options.seed, std::nullopt, err);
    }
    // The driver ended the process itself (exit() from inside a call).
    return verdict(id, VerdictState::suspect, "crashed", options.seed, std::nullopt,
                   "kcache-verify exited with " + std::to_string(r.exit_code) +
                       " without a verdict" + (err.empty() ? std::string() : ": " + err));
}

Verdict run_one(const device_db::DeviceIdentity& device, const std::string& id,
                const RunOptions& options, const PreviousBinary* previous) {
    compiler::SpawnSpec spec;
    spec.program = options.helper;
    spec.args = {"--canary",   id,
                 "--seed",     std::to_string(options.seed),
                 "--device",   device.name,
                 "--platform", device.platform_name,
                 "--driver",   device.driver_version};
    if (previous != nullptr) {
        spec.args.insert(spec.args.end(), {"--previous", previous->driver});
        spec.stdin_data.assign(previous->bytes.begin(), previous->bytes.end());
    }
    const compiler::RunResult r =
        compiler::run(spec, compiler::Clock::now() + options.timeout, [&](pid_t pid) {
            if (options.priority == Priority::background) {
                ::setpriority(PRIO_PROCESS, static_cast<id_t>(pid), kBackgroundNice);
            }
        });
    const std::size_t end = r.out.find('\n');
    const bool exited = r.outcome == compiler::ChildExit::exited && r.exit_code == 0;
    // Without a differential check only a helper that exited normally has
    // answered; with one, the first line holds even when running the earlier
    // binary killed the helper.
    if (end == std::string::npos || (!exited && previous == nullptr)) {
        return without_reply(id, r, options);
    }
    Verdict v = from_line(id, r.out.substr(0, end), options.seed);
    if (previous != nullptr) {
        const std::string second = r.out.substr(end + 1, r.out.find('\n', end + 1) - end - 1);
        v.differential = differential_of(id, second, previous->driver);
        if (!v.differential && !exited) {
            const Verdict ended = without_reply(id, r, options);
            v.differential = Differential{
                previous->driver, ended.check, std::nullopt,
                "while running driver " + previous->driver + "'s binary: " + ended.detail};
        }
    }
    return v;
}

}  // namespace

std::vector<kernels::Variant> default_set(const device_db::DeviceIdentity& device) {
    std::vector<kernels::Variant> set;
    for (const kernels::KernelInfo& k : kernels::kernels()) {
        if (!cl::has_kat(k.name)) {
            continue;
        }
        std::vector<kernels::Variant> supported;
        if (auto preferred = kernels::make_variant(k.name)) {
            supported.push_back(*preferred);
        }
        for (kernels::Variant& v : kernels::variants(k)) {
            supported.push_back(std::move(v));
        }
        std::erase_if(supported, [&](const kernels::Variant& v) {
            return !kernels::check_support(v, device.extensions);
        });
        std::vector<std::string> acts;
        for (const kernels::Param& p : k.params) {
            for (const kernels::ParamValue& value : p.values) {
                if (p.name == "act") {
                    acts.push_back(value.value);
                }
            }
        }
        // The paths in the order of their first variant; the n-th path's
        // variant has the n-th activation (round robin) where it offers it.
        std::vector<std::string> paths;
        for (const kernels::Variant& v : supported) {
            const std::string path = kernels::precision_path(v);
            if (std::find(paths.begin(), paths.end(), path) != paths.end()) {
                continue;
            }
            const std::string act = acts.empty() ? std::string() : acts[paths.size() % acts.size()];
            paths.push_back(path);
            const auto wanted =
                std::find_if(supported.begin(), supported.end(), [&](const auto& c) {
                    return kernels::precision_path(c) == path && c.get("act") == act &&
                           c.get("ls") == v.get("ls");
                });
            set.push_back(wanted != supported.end() ? *wanted : v);
        }
    }
    return set;
}

Record run_canary(const device_db::DeviceIdentity& device,
                  const std::vector<kernels::Variant>& variants, const RunOptions& options,
                  const PreviousBinaries& previous) {
    const auto start = std::chrono::steady_clock::now();
    Record record{driver_identity(device), options.seed,
                  static_cast<std::int64_t>(std::time(nullptr)), 0,
                  std::vector<Verdict>(variants.size())};
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const unsigned parallel =
        std::min<unsigned>(options.parallel != 0 ? options.parallel : std::min(cores, 4u),
                           static_cast<unsigned>(std::max<std::size_t>(variants.size(), 1)));
    std::atomic<std::size_t> next{0};
    const auto work = [&] {
        for (std::size_t i = next++; i < variants.size(); i = next++) {
            const std::string id = variants[i].id();
            const auto earlier = previous.find(id);
            record.verdicts[i] = run_one(device, id, options,
                                         earlier == previous.end() ? nullptr : &earlier->second);
        }
    };
    std::vector<std::thread> threads;
    for (unsigned t = 1; t < parallel; ++t) {
        threads.emplace_back(work);
    }
    work();
    for (std::thread& t : threads) {
        t.join();
    }
    record.wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    return record;
}

Verdict run_caller_kat(const device_db::DeviceIdentity& device, const std::string& name,
                       const std::filesystem::path& kat_file,
                       const std::vector<std::uint8_t>& binary, const std::string& build_options,
                       const RunOptions& options) {
    compiler::SpawnSpec spec;
    spec.program = options.helper;
    spec.args = {"--kat",    kat_file.string(),    "--options",  build_options,
                 "--device", device.name,          "--platform", device.platform_name,
                 "--driver", device.driver_version};
    spec.stdin_data.assign(binary.begin(), binary.end());
    const compiler::RunResult r = compiler::run(spec, compiler::Clock::now() + options.timeout);
    const std::size_t end = r.out.find('\n');
    const std::string state = r.out.substr(0, end);
    const std::string detail =
        end == std::string::npos ? "" : r.out.substr(end + 1, r.out.find('\n', end + 1) - end - 1);
    const bool answered = r.outcome == compiler::ChildExit::exited && end != std::string::npos;
    if (answered && (r.exit_code == 0 || r.exit_code == 1)) {
        return verdict(name, r.exit_code == 0 ? VerdictState::validated : VerdictState::suspect,
                       r.exit_code == 0 ? "" : "result", options.seed, max_error_in(detail),
                       detail);
    }
    if (r.outcome == compiler::ChildExit::exited && r.exit_code == 64) {
        return verdict(name, VerdictState::not_run, "kat_file", options.seed, std::nullopt,
                       r.err.substr(0, r.err.find('\n')));
    }
    return without_reply(name, r, options);
}

std::uint32_t fresh_seed() {
    std::random_device entropy;
    work::add(work::Item::random_draws);
    return static_cast<std::uint32_t>(entropy());
}

}  // namespace kcache::canary
