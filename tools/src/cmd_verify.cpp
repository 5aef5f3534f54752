// kcache verify: checks the checksum of every entry (user store or pack);
// with --run, also runs the known-answer tests on the device in the
// kcache-verify helper under a deadline (kat.hpp).

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "kat.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/store/pack.hpp"
#include "opencl_devices.hpp"
#include "signing.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

// Default bound on one known-answer test (load, launches, reads).
constexpr std::chrono::seconds kDefaultKatTimeout{60};

int verify_pack(const std::string& path, bool as_json) {
    if (auto problem = input_file_problem(path)) {
        return report(problem->code, "verify", problem->message);
    }
    int code = 0;
    auto config = load_cli_config("verify", code);
    if (!config) {
        return code;
    }
    // The signature is checked over the descriptor whose entries are checked next.
    auto fd = open_regular_file(path);
    bool signature_needs_action = false;
    auto signature =
        report_pack_signature(fd ? fd->get() : -1, path, *config, as_json, signature_needs_action);
    auto pack = fd ? store::Pack::open(fd->get(), path) : store::Pack::open(path);
    if (!pack) {
        return report(Exit::store_error, "verify", pack.error().message);
    }
    std::uint64_t good = 0;
    auto bad = pack->for_each_verified([&](store::Entry&&) { ++good; });
    if (!bad) {
        return report(Exit::store_error, "verify", bad.error().message);
    }
    if (as_json) {
        std::cout << json{{"checked", good + *bad},
                          {"ok", good},
                          {"corrupt", *bad},
                          {"signature", signature}}
                         .dump()
                  << "\n";
    } else {
        std::cout << "checked " << good + *bad << " entries: " << good << " ok, " << *bad
                  << " corrupt\n";
    }
    return *bad > 0 || signature_needs_action ? static_cast<int>(Exit::action_needed) : 0;
}

// How `verify --run` runs the known-answer tests: the helper, the devices
// present, the deadline of one test.
struct KatRun {
    std::string helper;
    std::vector<device_db::DeviceIdentity> devices;
    std::chrono::milliseconds timeout;
};

// Runs the KAT of `entry`, records a verdict on the entry (a timeout is a
// failure: the binary cannot be trusted to finish) and returns the outcome.
KatOutcome verify_on_device(store::Store& store, const KatRun& kat, const store::Entry& entry) {
    KatOutcome outcome = run_kat(kat.helper, kat.devices, entry, kat.timeout);
    if (outcome.state == KatState::passed || outcome.state == KatState::failed ||
        outcome.state == KatState::timeout) {
        const auto result = outcome.state == KatState::passed ? store::Verification::passed
                                                              : store::Verification::failed;
        (void)store.set_verified(entry.info.key, result);
    }
    return outcome;
}

bool needs_attention(KatState s) {
    return s == KatState::failed || s == KatState::timeout || s == KatState::error;
}

int run_verify(const ParsedArgs& args) {
    if (auto usage = args.exclusive({"pack", "run"}); !usage) {
        return report(Exit::usage, "verify", usage.error().message);
    }
    auto timeout = args.duration_value("timeout");
    if (!timeout) {
        return report(Exit::usage, "verify", timeout.error().message);
    }
    if (*timeout && !args.has("run")) {
        return report(Exit::usage, "verify", "--timeout bounds the known-answer tests of --run");
    }
    if (auto pack = args.value("pack")) {
        return verify_pack(*pack, args.has("json"));
    }
    int code = 0;
    auto store = open_user_store("verify", code);
    std::optional<KatRun> kat;
    if (store && args.has("run")) {
        auto devices = probe_selected("verify", std::nullopt, code);
        if (!devices) {
            return code;
        }
        kat = KatRun{verify_helper_path(), std::move(*devices),
                     timeout->value_or(kDefaultKatTimeout)};
    }
    if (!store) {
        return code;
    }
    // Hot copies first: a copy removed here is written again from its entry
    // after the reads below (at the store's write-back).
    auto copies = store->check_hot_copies();
    if (!copies) {
        return report(exit_for(copies.error()), "verify", copies.error().message);
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
        if (entry && kat) {
            const KatOutcome outcome = verify_on_device(*store, *kat, *entry);
            state = to_string(outcome.state);
            detail = outcome.detail;
            corrupt += needs_attention(outcome.state) ? 1 : 0;
        }
        json result{{"key", e.key.hex()}, {"kernel", e.fields.kernel_name}, {"state", state}};
        if (!detail.empty()) {
            result["detail"] = detail;
        }
        results.push_back(std::move(result));
        if (!args.has("json")) {
            std::cout << e.key.hex().substr(0, 16) << "  " << e.fields.kernel_name << "  " << state
                      << (detail.empty() ? "" : "  (" + detail + ")") << std::endl;
        }
    }
    if (args.has("json")) {
        std::cout << results.dump(2) << "\n";
    } else {
        std::cout << "checked " << listed->size() << " entries, " << corrupt << " need attention\n";
        std::cout << "checked " << copies->checked << " hot copies, " << copies->removed
                  << " removed (damaged, or not their entry's bytes; sound entries get theirs "
                     "again)\n";
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
             "Hot copies (hot/) are checked against their entries first: one damaged, of\n"
             "other bytes or without its entry is removed, and written again from a sound\n"
             "entry.\n"
             "--run also loads each binary on the device it was built for (if present) and\n"
             "runs the kernel's known-answer test in the kcache-verify helper, killed when\n"
             "--timeout passes: every entry point of the variant on\n"
             "small odd-sized inputs, compared with the CPU reference within the variant's\n"
             "tolerance (bit-exact for qconv_pointwise). Every registry kernel has one\n"
             "(conv2d, qconv_pointwise, dot, batchnorm, in each of their variants).\n"
             "passed/failed is recorded on the entry (see `kcache ls --verified`). States:\n"
             "ok, corrupt, kat_passed, kat_failed (with the first mismatch and the largest\n"
             "error, the OpenCL step that failed, or the signal that killed the helper),\n"
             "kat_timeout (recorded as failed: the test did not finish in time),\n"
             "kat_error (the helper could not run; nothing recorded), no_kat (not a\n"
             "registry kernel, e.g. a --manifest one, or built from another kcache\n"
             "version's source), device_absent; each with a detail (\"detail\" in --json).\n"
             "--pack also checks the pack's signature (PACK.minisig) when there is one and\n"
             "reports its key id, its trusted comment and whether the key is trusted\n"
             "(trusted.d directories, KCACHE_TRUSTED_KEYS) and the runtime uses the pack\n"
             "(KCACHE_REQUIRE_SIGNED_PACKS).\n",
             {{"run", Arity::flag, "", "also run known-answer tests on the device"},
              {"timeout", Arity::value, "DUR", "bound on one known-answer test (default 60s)"},
              {"pack", Arity::value, "FILE", "check this pack instead (checksums, signature)"},
              {"json", Arity::flag, "", "print JSON"}},
             0,
             0,
             std::string(kExitOk) +
                 "  1  an entry is corrupt, or failed, timed out or could not run its\n"
                 "     known-answer test, or the pack's signature is invalid or refused by the\n"
                 "     signature policy\n" +
                 kExitUsage + kExitNotFound + kExitStore + kExitEnvironment},
            run_verify};
}

}  // namespace kcache::cli
