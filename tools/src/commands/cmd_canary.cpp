// kcache canary: runs the driver canary (the known-answer tests of the
// registry kernels, built by each device's driver) and keeps its verdicts
// where the runtime reads them (<store>/canary/).

#include <algorithm>
#include <iostream>
#include <sstream>

#include "cli.hpp"
#include "kcache/service/parts.hpp"
#include "opencl_devices.hpp"
#include "reports/canary_report.hpp"
#include "warm/kat.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

std::string number(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

// The binaries earlier drivers built for `set` on `device` in the user store
// (none when it cannot be opened: the canary runs without the differential check).
canary::PreviousBinaries earlier_binaries(const Config& config,
                                          const device_db::DeviceIdentity& device,
                                          const std::vector<kernels::Variant>& set) {
    auto store = service::open_user_store(config, service::StoreAccess::read_only,
                                          service::OpenTiming::at_once);
    if (!store) {
        return {};
    }
    return canary::previous_binaries(*store, device, set, canary::canary_dir(config.dir));
}

// The records kept under `store_dir`: the driver canary's, then those of the
// callers' own known-answer tests (canary/kat/<test>/, one directory per test;
// `caller` tells them apart).
struct StoredRecord {
    canary::Record record;
    bool caller = false;
};
std::vector<StoredRecord> stored_records(const std::filesystem::path& store_dir) {
    const std::filesystem::path dir = canary::canary_dir(store_dir);
    std::vector<StoredRecord> all;
    for (canary::Record& r : canary::load_records(dir)) {
        all.push_back({std::move(r), false});
    }
    std::vector<std::filesystem::path> tests;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir / "kat", ec), end; !ec && it != end;
         it.increment(ec)) {
        tests.push_back(it->path());
    }
    std::sort(tests.begin(), tests.end());
    for (const std::filesystem::path& test : tests) {
        for (canary::Record& r : canary::load_records(test)) {
            all.push_back({std::move(r), true});
        }
    }
    return all;
}

int run_canary_command(const ParsedArgs& args) {
    auto seed = args.uint_value("seed", 0, UINT32_MAX);
    if (!seed) {
        return report(Exit::usage, "canary", seed.error().message);
    }
    int code = 0;
    auto config = load_cli_config("canary", code);
    if (!config) {
        return code;
    }
    if (args.has("show")) {
        if (args.has("device") || seed->has_value()) {
            return report(Exit::usage, "canary", "--show prints the stored verdicts only");
        }
        const auto records = stored_records(config->dir);
        json all = json::array();
        for (const StoredRecord& r : records) {
            if (args.has("json")) {
                all.push_back(canary_json(r.record));
                all.back()["caller_kat"] = r.caller;
            } else {
                std::cout << (r.caller ? "known-answer test of a request, " : "");
                print_canary(std::cout, r.record);
            }
        }
        if (args.has("json")) {
            std::cout << all.dump(2) << "\n";
        } else if (records.empty()) {
            std::cout << "no canary verdicts in " << canary::canary_dir(config->dir).string()
                      << "\n";
        }
        return 0;
    }
    auto devices = probe_selected("canary", args.value("device"), code);
    if (!devices) {
        return code;
    }
    const auto records =
        run_canaries(*config, *devices, seed->value_or(canary::fresh_seed()), args.has("json"));
    json all = json::array();
    bool suspect = false;
    for (const canary::Record& r : records) {
        all.push_back(canary_json(r));
        suspect = suspect || r.suspect();
    }
    if (args.has("json")) {
        std::cout << all.dump(2) << "\n";
    }
    return suspect ? static_cast<int>(Exit::action_needed) : 0;
}

}  // namespace

json canary_json(const canary::Record& r) {
    json j = json::parse(canary::to_json(r));  // the stored record's form, plus:
    j.erase("format");
    j["identity"]["id"] = r.identity.id();
    j["suspect"] = r.suspect();
    return j;
}

void print_canary(std::ostream& out, const canary::Record& r) {
    out << r.identity.describe() << ": " << (r.suspect() ? "SUSPECT" : "no suspect verdict")
        << " (seed " << r.seed << ", " << r.wall_ms << " ms)\n";
    for (const canary::Verdict& v : r.verdicts) {
        out << "  " << v.variant << "  " << canary::to_string(v.state);
        if (!v.check.empty()) {
            out << " (" << v.check << ")";
        }
        if (v.max_error) {
            out << "  max error " << number(*v.max_error);
        }
        if (v.state != canary::VerdictState::validated && !v.detail.empty()) {
            out << "\n      " << v.detail;
        }
        if (v.differential) {
            out << "\n      differential against driver " << v.differential->previous_driver << ": "
                << v.differential->result;
            if (v.differential->max_difference) {
                out << ", max difference " << number(*v.differential->max_difference);
            }
        }
        out << "\n";
    }
}

std::vector<CanaryLine> canary_summary(const std::filesystem::path& store_dir) {
    std::vector<CanaryLine> lines;
    for (const auto& [r, caller] : stored_records(store_dir)) {
        int counts[3] = {0, 0, 0};
        std::string suspects;
        json suspect_ids = json::array();
        for (const canary::Verdict& v : r.verdicts) {
            ++counts[static_cast<int>(v.state)];
            if (v.state == canary::VerdictState::suspect) {
                suspects += (suspects.empty() ? "" : ", ") + v.variant + ": " + v.check;
                suspect_ids.push_back(v.variant);
            }
        }
        const std::string what = caller && !r.verdicts.empty()
                                     ? "known-answer test " + r.verdicts.front().variant + " on "
                                     : std::string();
        lines.push_back({what + r.identity.describe() + ": " + std::to_string(counts[0]) +
                             " validated, " + std::to_string(counts[1]) + " suspect" +
                             (suspects.empty() ? "" : " (" + suspects + ")") + ", " +
                             std::to_string(counts[2]) + " not run",
                         r.suspect(),
                         {{"driver", r.identity.describe()},
                          {"id", r.identity.id()},
                          {"validated", counts[0]},
                          {"suspect", counts[1]},
                          {"not_run", counts[2]},
                          {"suspects", std::move(suspect_ids)},
                          {"caller_kat", caller}}});
    }
    return lines;
}

json canary_verdict(const Config& config, const device_db::DeviceIdentity& device,
                    const kernels::Variant& variant) {
    const char* policy = config.canary == CanaryPolicy::off       ? "off"
                         : config.canary == CanaryPolicy::enforce ? "enforce"
                                                                  : "warn";
    json out{{"state", "none"}, {"policy", policy}};
    auto record =
        canary::load_record(canary::canary_dir(config.dir), canary::driver_identity(device));
    const canary::Verdict* v = record ? canary::verdict_for(*record, variant) : nullptr;
    if (v != nullptr) {
        out = {{"state", canary::to_string(v->state)},
               {"check", v->check},
               {"seed", v->seed},
               {"variant", v->variant},
               {"detail", v->detail},
               {"policy", policy}};
    }
    return out;
}

std::vector<canary::Record> run_canaries(const Config& config,
                                         const std::vector<device_db::DeviceIdentity>& devices,
                                         std::uint32_t seed, bool quiet) {
    std::vector<canary::Record> records;
    for (const device_db::DeviceIdentity& d : devices) {
        canary::RunOptions options;
        options.helper = verify_helper_path();
        options.seed = seed;
        const auto set = canary::default_set(d);
        records.push_back(canary::run_canary(d, set, options, earlier_binaries(config, d, set)));
        if (!config.read_only) {
            if (auto saved = canary::save_record(canary::canary_dir(config.dir), records.back());
                !saved) {
                std::cerr << "kcache canary: verdicts not stored: " << saved.error() << "\n";
            }
        }
        if (!quiet) {
            print_canary(std::cout, records.back());
        }
    }
    publish_findings(config, records);  // other nodes apply them as errata
    return records;
}

Command canary_command() {
    return {{"canary",
             "[options]",
             "run the driver canary: known-answer tests on each device's driver",
             "Builds the default set (the default variant of every registry kernel the\n"
             "device supports) with each selected device's driver, loads the binary the\n"
             "driver produced and runs the kernel's known-answer test on inputs drawn\n"
             "from a seed (random unless --seed; recorded), each in the kcache-verify\n"
             "helper under a 20 s deadline. Verdicts per driver and variant: validated,\n"
             "suspect (the failing check, the seed and the largest error; a test that\n"
             "hangs is suspect 'timeout', one that crashes the helper 'crashed') or\n"
             "not_run. They are stored under <store>/canary/ (not with KCACHE_READONLY),\n"
             "where the runtime reads them before serving a driver's binaries\n"
             "(KCACHE_CANARY). Where the store holds a binary an earlier driver built for\n"
             "the same variant and device, the differential check also loads it on this\n"
             "driver and runs it on the same inputs: the two outputs are compared within\n"
             "the kernel's tolerance and the CPU reference decides which one is wrong.\n"
             "--show prints the stored verdicts without running, with those of requests' own\n"
             "known-answer tests (docs/canary-kat.md).\n",
             {{"device", Arity::value, "SEL", "only this device (index or name substring)"},
              {"seed", Arity::value, "N", "seed of the inputs (default: random)"},
              {"show", Arity::flag, "", "print the stored verdicts, run nothing"},
              {"json", Arity::flag, "", "print JSON"}},
             0,
             0,
             std::string(kExitOk) + "  1  a verdict is suspect\n" + kExitUsage + kExitNotFound +
                 kExitEnvironment},
            run_canary_command};
}

}  // namespace kcache::cli
