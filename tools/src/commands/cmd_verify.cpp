// kcache verify: checks the checksum of every entry (user store or pack) and
// loads each binary whose device is present in the kcache-verify helper under
// a deadline; with --run, also runs the known-answer tests there (kat.hpp).

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/store/pack.hpp"
#include "opencl_devices.hpp"
#include "signing.hpp"
#include "warm/kat.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

// Default bound on one known-answer test (load, launches, reads).
constexpr std::chrono::seconds kDefaultKatTimeout{60};

// A binary's state after its load check: "ok", or "load_failed" (the driver
// refused it, or loading it crashed or hung the helper), or "load_error" (the
// helper could not run), with the detail.
struct LoadVerdict {
    std::string state;
    std::string detail;
    bool bad = false;
};

LoadVerdict load_verdict(LoadCheck& load, const store::Entry& entry) {
    LoadOutcome outcome = load(entry);
    switch (outcome.state) {
        case LoadState::loaded:
        case LoadState::device_absent:
            return {"ok", std::move(outcome.detail), false};
        case LoadState::rejected:
            return {"load_failed", std::move(outcome.detail), true};
        case LoadState::error:
            break;
    }
    return {"load_error", std::move(outcome.detail), true};
}

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
    std::uint64_t unloadable = 0;
    std::uint64_t not_loaded = 0;
    LoadCheck load;
    auto bad = pack->for_each_verified([&](store::Entry&& entry) {
        const LoadVerdict v = load_verdict(load, entry);
        good += v.bad ? 0 : 1;
        unloadable += v.bad ? 1 : 0;
        not_loaded += !v.bad && !v.detail.empty() ? 1 : 0;
        if (v.bad && !as_json) {
            std::cerr << "kcache verify: " << entry.info.fields.kernel_name << ": " << v.state
                      << ": " << v.detail << "\n";
        }
    });
    if (!bad) {
        return report(Exit::store_error, "verify", bad.error().message);
    }
    if (as_json) {
        std::cout << json{{"checked", good + unloadable + *bad},
                          {"ok", good},
                          {"corrupt", *bad},
                          {"load_failed", unloadable},
                          {"not_loaded", not_loaded},
                          {"signature", signature}}
                         .dump()
                  << "\n";
    } else {
        std::cout << "checked " << good + unloadable + *bad << " entries: " << good << " ok, "
                  << *bad << " corrupt, " << unloadable << " the driver cannot load"
                  << " (" << not_loaded << " not loaded: device absent)\n";
    }
    return *bad > 0 || unloadable > 0 || signature_needs_action
               ? static_cast<int>(Exit::action_needed)
               : 0;
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
KatOutcome run_recorded_kat(store::Store& store, const KatRun& kat, const store::Entry& entry) {
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

// Checks one sound entry on its device: its KAT with --run (which loads it),
// else (and for a kernel without one) a load check; a binary the driver
// cannot load is recorded as failed.
LoadVerdict verify_on_device(store::Store& store, const std::optional<KatRun>& kat, LoadCheck& load,
                             const store::Entry& entry) {
    std::optional<KatOutcome> outcome;
    if (kat) {
        outcome = run_recorded_kat(store, *kat, entry);
        if (outcome->state != KatState::no_kat) {
            return {to_string(outcome->state), outcome->detail, needs_attention(outcome->state)};
        }
    }
    LoadVerdict v = load_verdict(load, entry);
    if (v.state == "load_failed") {
        (void)store.set_verified(entry.info.key, store::Verification::failed);
    } else if (outcome && v.state == "ok") {  // loaded (or not): still without a KAT
        return {to_string(outcome->state), outcome->detail, false};
    }
    return v;
}

// Reads every listed entry (and loads and tests it with `kat`), adds a
// result per entry to `results` (printed as it goes unless `json`); returns
// how many need attention.
int verify_entries(store::Store& user_store, const std::optional<KatRun>& kat,
                   const std::vector<store::EntryInfo>& listed, bool json_out, json& results) {
    int corrupt = 0;
    LoadCheck load = kat ? LoadCheck(kat->devices, kDefaultLoadTimeout) : LoadCheck();
    for (const store::EntryInfo& e : listed) {
        auto entry = user_store.get(e.key);
        std::string state = entry ? "ok" : store::to_string(entry.error().reason);
        std::string detail;
        corrupt += entry ? 0 : 1;
        if (entry) {
            LoadVerdict v = verify_on_device(user_store, kat, load, *entry);
            state = std::move(v.state);
            detail = std::move(v.detail);
            corrupt += v.bad ? 1 : 0;
        }
        json result{{"key", e.key.hex()}, {"kernel", e.fields.kernel_name}, {"state", state}};
        if (!detail.empty()) {
            result["detail"] = detail;
        }
        results.push_back(std::move(result));
        if (!json_out) {
            std::cout << e.key.hex().substr(0, 16) << "  " << e.fields.kernel_name << "  " << state
                      << (detail.empty() ? "" : "  (" + detail + ")") << std::endl;
        }
    }
    return corrupt;
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
    const int corrupt = verify_entries(*store, kat, *listed, args.has("json"), results);
    if (args.has("json")) {
        std::cout << results.dump(2) << "\n";
    } else {
        std::cout << "checked " << listed->size() << " entries, " << corrupt << " need attention\n";
        std::cout << "checked " << copies->checked << " hot copies, " << copies->removed
                  << " removed (damaged, or not their entry's bytes; sound entries get theirs "
                     "again)\n";
        if (copies->leftovers != 0) {
            std::cout << "removed " << copies->leftovers
                      << " temporary files left in the hot copies' directory by writers that "
                         "stopped\n";
        }
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
             "Each sound binary whose device is present is then loaded in the\n"
             "kcache-verify helper, killed after 30 s: one the driver refuses, or whose\n"
             "load crashes or hangs the helper, is load_failed (recorded as failed);\n"
             "load_error: the helper could not run. A binary whose device is absent is\n"
             "ok with the detail \"not loaded\".\n"
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
             "--pack loads each binary the same way (load_failed and not_loaded counts)\n"
             "and also checks the pack's signature (PACK.minisig) when there is one and\n"
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
                 "  1  an entry is corrupt or cannot be loaded, or failed, timed out or could\n"
                 "     not run its known-answer test, or the pack's signature is invalid or\n"
                 "     refused by the signature policy\n" +
                 kExitUsage + kExitNotFound + kExitStore + kExitEnvironment},
            run_verify};
}

}  // namespace kcache::cli
