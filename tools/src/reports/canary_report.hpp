#pragma once
// The driver canary as the CLI shows and runs it: `kcache canary`, the
// canary `kcache warm` runs first, and the verdict lines of `doctor`,
// `stats` and `explain`.

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kcache/canary/canary.hpp"
#include "kcache/service/service_api.hpp"

namespace kcache::cli {

// A record as JSON: identity, seed, run time, wall time and every verdict.
nlohmann::json canary_json(const canary::Record& record);

// Prints a record for people: a header line and one line per verdict.
void print_canary(std::ostream& out, const canary::Record& record);

// One line per driver of the records stored under `store_dir`: "<device>,
// driver <v>: N validated, M suspect (…), K not run", whether a verdict is
// suspect, and the same as {"driver", "id", "validated", "suspect",
// "not_run", "suspects": [variant…], "caller_kat"}; then one per verdict of a
// request's own known-answer test ("known-answer test NAME on <device>…",
// "caller_kat": true).
struct CanaryLine {
    std::string text;
    bool suspect = false;
    nlohmann::json json;
};
std::vector<CanaryLine> canary_summary(const std::filesystem::path& store_dir);

// The stored verdict covering `variant` on `device`'s driver (canary::verdict_for)
// as {"state", "check", "seed", "detail", "policy"}; state "none" when there is
// none (the canary has not run for this driver, or did not test the kernel).
nlohmann::json canary_verdict(const Config& config, const device_db::DeviceIdentity& device,
                              const kernels::Variant& variant);

// Runs the default canary on `devices` (one record each), stores each record
// unless the configuration is read-only, prints each as `print_canary` does
// unless `quiet`, publishes suspect findings as errata (publish_findings);
// returns the records.
std::vector<canary::Record> run_canaries(const Config& config,
                                         const std::vector<device_db::DeviceIdentity>& devices,
                                         std::uint32_t seed, bool quiet);

// Publishes the errata of the suspect verdicts of `records` to the remote
// tier of `config` when one is configured (cmd_errata.cpp); says on stderr
// what was published, or why not.
void publish_findings(const Config& config, const std::vector<canary::Record>& records);

}  // namespace kcache::cli
