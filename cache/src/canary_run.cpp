// Running the canary: the default set of variants, and one kcache-verify
// (--canary) per variant under the watchdog, several at once.

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <random>
#include <thread>

#include "kcache/cache/canary.hpp"
#include "kcache/cl/kat.hpp"
#include "kcache/compiler/subprocess.hpp"

namespace kcache::canary {
namespace {

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

// The verdict of the helper's reply line "id TAB state TAB detail".
Verdict from_line(const std::string& id, const std::string& line, std::uint32_t seed) {
    const std::size_t tab1 = line.find('\t');
    const std::size_t tab2 = tab1 == std::string::npos ? tab1 : line.find('\t', tab1 + 1);
    if (tab2 == std::string::npos || line.substr(0, tab1) != id) {
        return {id,   VerdictState::not_run, "error",
                seed, std::nullopt,          "kcache-verify replied \"" + line + "\""};
    }
    const std::string state = line.substr(tab1 + 1, tab2 - tab1 - 1);
    std::string detail = line.substr(tab2 + 1);
    if (state == cl::to_string(cl::KatState::passed)) {
        return {id, VerdictState::validated, "", seed, max_error_in(detail), std::move(detail)};
    }
    if (state == cl::to_string(cl::KatState::failed)) {
        const std::size_t colon = detail.find(": ");
        return {id,   VerdictState::suspect, detail.substr(0, colon),
                seed, max_error_in(detail),  detail};
    }
    return {id,   VerdictState::not_run, state == "unsupported" ? state : "no_kat",
            seed, std::nullopt,          std::move(detail)};
}

Verdict run_one(const device_db::DeviceIdentity& device, const std::string& id,
                const RunOptions& options) {
    compiler::SpawnSpec spec;
    spec.program = options.helper;
    spec.args = {"--canary",   id,
                 "--seed",     std::to_string(options.seed),
                 "--device",   device.name,
                 "--platform", device.platform_name,
                 "--driver",   device.driver_version};
    const compiler::RunResult r = compiler::run(spec, compiler::Clock::now() + options.timeout);
    switch (r.outcome) {
        case compiler::ChildExit::timed_out:
            return {id,
                    VerdictState::suspect,
                    "timeout",
                    options.seed,
                    std::nullopt,
                    "the canary did not finish within " + std::to_string(options.timeout.count()) +
                        " ms; kcache-verify was killed"};
        case compiler::ChildExit::signaled:
            return {id,
                    VerdictState::suspect,
                    "crashed",
                    options.seed,
                    std::nullopt,
                    "the canary crashed kcache-verify (signal " + std::to_string(r.signal) + ")"};
        case compiler::ChildExit::spawn_failed:
            return {id,
                    VerdictState::not_run,
                    "error",
                    options.seed,
                    std::nullopt,
                    "cannot start " + options.helper + ": " +
                        std::error_code(r.spawn_errno, std::generic_category()).message()};
        case compiler::ChildExit::exited:
            break;
    }
    const std::string line = r.out.substr(0, r.out.find('\n'));
    if (r.exit_code == 0 && !line.empty()) {
        return from_line(id, line, options.seed);
    }
    const std::string err = r.err.substr(0, r.err.find('\n'));
    if (r.exit_code == 2 || r.exit_code == 64) {  // device absent, usage: nothing learnt
        return {id,           VerdictState::not_run, r.exit_code == 2 ? "no_device" : "error",
                options.seed, std::nullopt,          err};
    }
    // The driver ended the process itself (exit() from inside a call).
    return {id,
            VerdictState::suspect,
            "crashed",
            options.seed,
            std::nullopt,
            "kcache-verify exited with " + std::to_string(r.exit_code) + " without a verdict" +
                (err.empty() ? std::string() : ": " + err)};
}

}  // namespace

std::vector<kernels::Variant> default_set(const device_db::DeviceIdentity& device) {
    std::vector<kernels::Variant> set;
    for (const kernels::KernelInfo& k : kernels::kernels()) {
        if (!cl::has_kat(k.name)) {
            continue;
        }
        std::vector<kernels::Variant> candidates;
        if (auto preferred = kernels::make_variant(k.name)) {
            candidates.push_back(*preferred);
        }
        for (kernels::Variant& v : kernels::variants(k)) {
            candidates.push_back(std::move(v));
        }
        for (const kernels::Variant& v : candidates) {
            if (kernels::check_support(v, device.extensions)) {
                set.push_back(v);
                break;
            }
        }
    }
    return set;
}

Record run_canary(const device_db::DeviceIdentity& device,
                  const std::vector<kernels::Variant>& variants, const RunOptions& options) {
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
            record.verdicts[i] = run_one(device, variants[i].id(), options);
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

std::uint32_t fresh_seed() {
    std::random_device entropy;
    return static_cast<std::uint32_t>(entropy());
}

}  // namespace kcache::canary
