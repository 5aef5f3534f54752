// Running the canary: the default set of variants, and a few kcache-verify
// (--canary) at once under the watchdog, each running its share of the set
// with a bound per variant.

#include <sys/resource.h>

#include <algorithm>
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

// kcache-verify's arguments and stdin for the variants `ids` (the earlier
// drivers' binaries framed as kernels_cl/src/verify_canary.hpp says).
compiler::SpawnSpec canary_spec(const device_db::DeviceIdentity& device,
                                const std::vector<std::string>& ids, const RunOptions& options,
                                const PreviousBinaries& previous) {
    compiler::SpawnSpec spec;
    spec.program = options.helper;
    std::string list;
    std::string frames;
    for (const std::string& id : ids) {
        list += (list.empty() ? "" : ";") + id;
        const auto earlier = previous.find(id);
        if (earlier == previous.end()) {
            frames += "\n0\n";
            continue;
        }
        frames +=
            earlier->second.driver + "\n" + std::to_string(earlier->second.bytes.size()) + "\n";
        frames.append(earlier->second.bytes.begin(), earlier->second.bytes.end());
    }
    spec.args = {"--canary",   list,
                 "--seed",     std::to_string(options.seed),
                 "--device",   device.name,
                 "--platform", device.platform_name,
                 "--driver",   device.driver_version};
    if (frames.size() != 3 * ids.size()) {  // some variant has an earlier binary
        spec.args.insert(spec.args.end(), {"--previous", "stdin"});
        spec.stdin_data = std::move(frames);
    }
    spec.line_grace = options.timeout;  // the bound is per variant
    return spec;
}

// The helper's reply lines, in order.
std::vector<std::string> reply_lines(const std::string& out) {
    std::vector<std::string> lines;
    for (std::size_t at = 0, end; (end = out.find('\n', at)) != std::string::npos; at = end + 1) {
        lines.push_back(out.substr(at, end - at));
    }
    return lines;
}

// How one kcache-verify of a share ended.
struct Ended {
    const compiler::RunResult& r;
    bool exited;          // normally, with status 0
    bool nothing_learnt;  // nothing to blame on a variant: the device is absent, bad usage
};

// The verdicts of the variants `batch` (`ids`) from the replies of the
// helper that ran them; returns those to run again in a fresh helper: when
// it died or was killed, the variants after the one it was running (whose
// verdict says how it ended), or, when it died after its last line, that
// last variant (alone, it gets the verdict a lone helper would).
std::vector<std::size_t> read_replies(const Ended& e, const std::vector<std::size_t>& batch,
                                      const std::vector<std::string>& ids,
                                      const RunOptions& options, const PreviousBinaries& previous,
                                      std::vector<Verdict>& verdicts) {
    const compiler::RunResult& r = e.r;
    const bool exited = e.exited;
    const bool nothing_learnt = e.nothing_learnt;
    const std::vector<std::string> lines = reply_lines(r.out);
    std::size_t line = 0;
    for (std::size_t k = 0; k < batch.size(); ++k) {
        const std::string& id = ids[k];
        const auto earlier = previous.find(id);
        if (line >= lines.size()) {
            if (!exited && !nothing_learnt) {  // it was running this one: blame it, retry the rest
                verdicts[batch[k]] = without_reply(id, r, options);
                return {batch.begin() + static_cast<std::ptrdiff_t>(k) + 1, batch.end()};
            }
            for (std::size_t rest = k; rest < batch.size(); ++rest) {
                verdicts[batch[rest]] = exited ? from_line(ids[rest], "", options.seed)
                                               : without_reply(ids[rest], r, options);
            }
            return {};
        }
        Verdict v = from_line(id, lines[line++], options.seed);
        if (earlier != previous.end()) {
            v.differential = line < lines.size()
                                 ? differential_of(id, lines[line], earlier->second.driver)
                                 : std::nullopt;
            line += v.differential ? 1 : 0;
            if (!v.differential && !exited) {
                const Verdict ended = without_reply(id, r, options);
                v.differential = Differential{earlier->second.driver, ended.check, std::nullopt,
                                              "while running driver " + earlier->second.driver +
                                                  "'s binary: " + ended.detail};
                verdicts[batch[k]] = std::move(v);
                return {batch.begin() + static_cast<std::ptrdiff_t>(k) + 1, batch.end()};
            }
        }
        verdicts[batch[k]] = std::move(v);
    }
    if (!exited && batch.size() > 1) {
        return {batch.back()};
    }
    if (!exited && previous.find(ids.back()) == previous.end()) {
        verdicts[batch.back()] = without_reply(ids.back(), r, options);
    }
    return {};
}

// Runs the variants `batch` (indexes into `variants`) in one kcache-verify,
// filling their `verdicts`; returns those to run again (read_replies).
std::vector<std::size_t> run_batch(const device_db::DeviceIdentity& device,
                                   const std::vector<kernels::Variant>& variants,
                                   const std::vector<std::size_t>& batch, const RunOptions& options,
                                   const PreviousBinaries& previous,
                                   std::vector<Verdict>& verdicts) {
    std::vector<std::string> ids;
    for (std::size_t i : batch) {
        ids.push_back(variants[i].id());
    }
    const compiler::RunResult r =
        compiler::run(canary_spec(device, ids, options, previous),
                      compiler::Clock::now() + options.timeout, [&](pid_t pid) {
                          if (options.priority == Priority::background) {
                              ::setpriority(PRIO_PROCESS, static_cast<id_t>(pid), kBackgroundNice);
                          }
                      });
    const bool exited = r.outcome == compiler::ChildExit::exited && r.exit_code == 0;
    const bool nothing_learnt =
        r.outcome == compiler::ChildExit::spawn_failed ||
        (r.outcome == compiler::ChildExit::exited && (r.exit_code == 2 || r.exit_code == 64));
    return read_replies(Ended{r, exited, nothing_learnt}, batch, ids, options, previous, verdicts);
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
    // One helper per share, the variants dealt out in turn (neighbours in
    // the set are the same kernel, so each share holds a mix of costs); a
    // helper starts its driver once for its whole share.
    std::vector<std::vector<std::size_t>> shares(parallel);
    for (std::size_t i = 0; i < variants.size(); ++i) {
        shares[i % parallel].push_back(i);
    }
    const auto work = [&](std::vector<std::size_t> share) {
        while (!share.empty()) {
            share = run_batch(device, variants, share, options, previous, record.verdicts);
        }
    };
    std::vector<std::thread> threads;
    for (unsigned t = 1; t < parallel; ++t) {
        threads.emplace_back(work, shares[t]);
    }
    work(shares[0]);
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
