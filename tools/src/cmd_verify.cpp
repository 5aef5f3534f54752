// kcache verify: checks the checksum of every entry (user store or pack);
// with --run, also runs the known-answer tests on the device (kat.hpp).

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "kat.hpp"
#include "kcache/store/pack.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

int verify_pack(const std::string& path, bool as_json) {
    if (!std::filesystem::exists(path)) {
        return report(Exit::not_found, "verify", "no such pack: " + path);
    }
    auto pack = store::Pack::open(path);
    if (!pack) {
        return report(Exit::store_error, "verify", pack.error().message);
    }
    std::uint64_t good = 0;
    auto bad = pack->for_each_verified([&](store::Entry&&) { ++good; });
    if (!bad) {
        return report(Exit::store_error, "verify", bad.error().message);
    }
    if (as_json) {
        std::cout << json{{"checked", good + *bad}, {"ok", good}, {"corrupt", *bad}}.dump() << "\n";
    } else {
        std::cout << "checked " << good + *bad << " entries: " << good << " ok, " << *bad
                  << " corrupt\n";
    }
    return *bad > 0 ? static_cast<int>(Exit::action_needed) : 0;
}

int run(const ParsedArgs& args) {
    if (auto usage = args.exclusive({"pack", "run"}); !usage) {
        return report(Exit::usage, "verify", usage.error().message);
    }
    if (auto pack = args.value("pack")) {
        return verify_pack(*pack, args.has("json"));
    }
    int code = 0;
    auto store = open_user_store("verify", code);
    std::optional<std::vector<OpenedDevice>> devices;
    if (store && args.has("run")) {
        devices = open_devices("verify", std::nullopt, code);
        if (!devices) {
            return code;
        }
    }
    if (!store) {
        return code;
    }
    auto listed = store->list();
    if (!listed) {
        return report(exit_for(listed.error()), "verify", listed.error().message);
    }
    json results = json::array();
    int corrupt = 0;
    for (const store::EntryInfo& e : *listed) {
        auto entry = store->get(e.key);
        std::string state = entry ? "ok" : store::to_string(entry.error().reason);
        std::string detail;
        corrupt += entry ? 0 : 1;
        if (entry && devices) {
            const KatOutcome kat = run_kat(*devices, *entry);
            state = to_string(kat.state);
            detail = kat.detail;
            if (kat.state == KatState::passed || kat.state == KatState::failed) {
                const auto result = kat.state == KatState::passed ? store::Verification::passed
                                                                  : store::Verification::failed;
                (void)store->set_verified(e.key, result);
                corrupt += kat.state == KatState::failed ? 1 : 0;
            }
        }
        json result{{"key", e.key.hex()}, {"kernel", e.fields.kernel_name}, {"state", state}};
        if (!detail.empty()) {
            result["detail"] = detail;
        }
        results.push_back(std::move(result));
        if (!args.has("json")) {
            std::cout << e.key.hex().substr(0, 16) << "  " << e.fields.kernel_name << "  " << state
                      << (detail.empty() ? "" : "  (" + detail + ")") << "\n";
        }
    }
    if (args.has("json")) {
        std::cout << results.dump(2) << "\n";
    } else {
        std::cout << "checked " << listed->size() << " entries, " << corrupt << " need attention\n";
    }
    return corrupt > 0 ? static_cast<int>(Exit::action_needed) : 0;
}

}  // namespace

Command verify_command() {
    return {{"verify",
             "[options]",
             "check every entry's checksum; --run also runs KATs",
             "Without options every entry of the user store is read and its XXH3 checksum\n"
             "checked; a corrupt entry is quarantined (it becomes a miss and is rebuilt).\n"
             "--run also loads each binary on the device it was built for (if present) and\n"
             "runs the kernel's known-answer test: every entry point of the variant on\n"
             "small odd-sized inputs, compared with the CPU reference within the variant's\n"
             "tolerance (bit-exact for qconv_pointwise). Every registry kernel has one\n"
             "(conv2d, qconv_pointwise, dot, batchnorm, in each of their variants).\n"
             "passed/failed is recorded on the entry (see `kcache ls --verified`). States:\n"
             "ok, corrupt, kat_passed, kat_failed (with the first mismatch and the largest\n"
             "error, or the OpenCL step that failed), no_kat (not a registry kernel, e.g.\n"
             "a --manifest one, or built from another kcache version's source),\n"
             "device_absent; each with a detail (\"detail\" in --json).\n",
             {{"run", Arity::flag, "", "also run known-answer tests on the device"},
              {"pack", Arity::value, "FILE", "check this pack instead (checksums only)"},
              {"json", Arity::flag, "", "print JSON"}},
             0,
             0,
             std::string(kExitOk) + "  1  an entry is corrupt or failed its known-answer test\n" +
                 kExitUsage + kExitNotFound + kExitStore},
            run};
}

}  // namespace kcache::cli
