// kcache gc, export and import: shrink the user store and move entries
// between machines as pack files.

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "entries.hpp"
#include "kcache/canary/binary_vouch.hpp"
#include "kcache/canary/pack_trust.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/store/pack.hpp"
#include "signing.hpp"
#include "warm/kat.hpp"
#include "warm/manifest_entries.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

// `gc --failures`: forgets every failure record, so the next request compiles.
int clear_failures(store::Store& store, bool as_json) {
    auto cleared = store.clear_all_failures();
    if (!cleared) {
        return report(exit_for(cleared.error()), "gc", cleared.error().message);
    }
    if (as_json) {
        std::cout << json{{"failures_cleared", *cleared}}.dump() << "\n";
    } else {
        std::cout << "cleared " << *cleared << " failure records\n";
    }
    return 0;
}

// Removes the verdicts on binaries built elsewhere (binary_vouch.hpp) whose
// key neither the user store nor a runtime pack holds any more; none when
// either cannot be listed (a verdict kept costs a file, one dropped a check).
std::size_t drop_stale_verdicts(store::Store& store) {
    int code = 0;
    auto config = load_cli_config("gc", code);
    auto listed = store.list();
    if (!config || !listed) {
        return 0;
    }
    std::set<std::string> live;
    for (const store::EntryInfo& e : *listed) {
        live.insert(e.key.hex());
    }
    for (const auto& path : service::runtime_pack_files(*config)) {
        auto pack = store::Pack::open(path);
        if (!pack) {
            return 0;
        }
        auto entries = pack->list();
        if (!entries) {
            return 0;
        }
        for (const store::EntryInfo& e : *entries) {
            live.insert(e.key.hex());
        }
    }
    return service::drop_stale_verdicts(config->dir / "vouched", live);
}

int run_gc(const ParsedArgs& args) {
    auto max_size = args.size_value("max-size");
    auto older = args.duration_value("older-than");
    if (!max_size || !older) {
        return report(Exit::usage, "gc", (!max_size ? max_size.error() : older.error()).message);
    }
    const bool failures = args.has("failures");
    if (failures && (*max_size || *older)) {
        return report(Exit::usage, "gc",
                      "--failures cannot be combined with --max-size or --older-than");
    }
    if (!*max_size && !*older && !failures) {
        return report(Exit::usage, "gc", "give --max-size, --older-than (or both), or --failures");
    }
    int code = 0;
    auto store = open_user_store("gc", code);
    if (!store) {
        return code;
    }
    if (failures) {
        return clear_failures(*store, args.has("json"));
    }
    store::GcOptions options;
    options.max_bytes = *max_size;
    if (*older) {
        options.unused_for_ms = older->value().count();
    }
    auto done = store->gc(options);
    if (!done) {
        return report(exit_for(done.error()), "gc", done.error().message);
    }
    const std::size_t verdicts = drop_stale_verdicts(*store);
    if (args.has("json")) {
        std::cout << json{{"removed", done->removed},
                          {"freed_bytes", done->freed_bytes},
                          {"verdicts_removed", verdicts}}
                         .dump()
                  << "\n";
    } else {
        std::cout << "removed " << done->removed << " entries, freed "
                  << human_size(done->freed_bytes) << ", " << verdicts << " stale verdicts\n";
    }
    return 0;
}

// The entries a manifest's items name (manifest_entries.hpp), or prints why
// not (an item unknown or not in the store) and sets `code`.
std::optional<std::vector<store::Key>> manifest_keys(store::Store& store,
                                                     const std::filesystem::path& path, int& code) {
    auto items = load_manifest(path);
    if (!items) {
        code = report(items.error().code == ManifestErrc::not_found ? Exit::not_found : Exit::usage,
                      "export", items.error().message);
        return std::nullopt;
    }
    auto listed = store.list();
    if (!listed) {
        code = report(exit_for(listed.error()), "export", listed.error().message);
        return std::nullopt;
    }
    std::vector<std::string> unmatched, unknown;
    auto keys = manifest_entry_keys(*items, *listed, unmatched, unknown);
    if (!unknown.empty() || !unmatched.empty()) {
        const std::string first = !unknown.empty() ? unknown[0] : unmatched[0];
        code = report(Exit::not_found, "export",
                      std::to_string(unknown.size() + unmatched.size()) +
                          " manifest item(s) with no entry in the store (first: " + first +
                          "); run kcache warm --manifest first");
        return std::nullopt;
    }
    return keys;
}

int run_export(const ParsedArgs& args) {
    const std::filesystem::path out = args.positionals()[0];
    if (auto problem = new_output_problem(out)) {
        return report(problem->code, "export", problem->message);
    }
    if (auto both = args.exclusive({"manifest", "kernel"}); !both) {
        return report(Exit::usage, "export", both.error().message);
    }
    int code = 0;
    std::optional<store::SecretKey> key;
    if (auto key_path = args.value("sign")) {
        if (!(key = load_signing_key("export", *key_path, code))) {
            return code;
        }
    }
    auto store = open_user_store("export", code);
    if (!store) {
        return code;
    }
    std::vector<store::Key> keys;
    if (auto manifest = args.value("manifest")) {
        if (auto picked = manifest_keys(*store, *manifest, code)) {
            keys = std::move(*picked);
        } else {
            return code;
        }
    } else if (auto kernel = args.value("kernel")) {
        auto canonical = kernels::resolve(*kernel);
        auto listed = store->list();
        if (!canonical || !listed) {
            return report(!canonical ? Exit::not_found : Exit::store_error, "export",
                          !canonical ? "unknown kernel '" + *kernel + "'" : listed.error().message);
        }
        for (const store::EntryInfo& e : *listed) {
            if (e.fields.kernel_name == *canonical ||
                e.fields.kernel_name.rfind(*canonical + ":", 0) == 0) {
                keys.push_back(e.key);
            }
        }
        if (keys.empty()) {
            return report(Exit::not_found, "export", "no entries of kernel " + *canonical);
        }
    }
    auto exported = store->export_pack(out, keys);
    if (!exported) {
        return report(exit_for(exported.error()), "export", exported.error().message);
    }
    std::cout << "exported " << *exported << " entries to " << out.string() << "\n";
    return key ? sign_written_pack("export", out, *key) : 0;
}

int run_import(const ParsedArgs& args) {
    const std::string pack = args.positionals()[0];
    if (auto problem = input_file_problem(pack)) {
        return report(problem->code, "import", problem->message);
    }
    int code = 0;
    auto config = load_cli_config("import", code);
    auto store = config ? open_user_store("import", code) : std::nullopt;
    if (!store) {
        return code;
    }
    // Checked and read over one descriptor: what was checked is what is imported.
    auto checked = store::open_checked_pack(pack, service::trusted_keys(*config),
                                            service::signature_policy(*config));
    if (checked.refused) {
        return report(Exit::store_error, "import", "refusing " + pack + ": " + *checked.refused);
    }
    if (checked.signature.state == store::SignatureState::invalid) {
        std::cerr << "kcache import: warning: " << pack << " has an invalid signature ("
                  << checked.signature.detail
                  << "); imported because signed packs are not required\n";
    }
    if (!checked.pack) {
        return report(Exit::store_error, "import", checked.error);
    }
    // Each binary is loaded in the helper first (when its device is present):
    // one the driver cannot load is not imported.
    LoadCheck load;
    std::uint64_t not_loaded = 0;
    auto imported = store->import_pack(*checked.pack, [&](const store::Entry& entry) {
        const LoadOutcome outcome = load(entry);
        not_loaded += outcome.state == LoadState::device_absent ? 1 : 0;
        if (outcome.state == LoadState::rejected || outcome.state == LoadState::error) {
            std::cerr << "kcache import: skipping " << entry.info.fields.kernel_name << ": "
                      << outcome.detail << "\n";
            return false;
        }
        return true;
    });
    if (!imported) {
        return report(exit_for(imported.error()), "import", imported.error().message);
    }
    if (args.has("json")) {
        std::cout << json{{"imported", imported->imported},
                          {"already_present", imported->already_present},
                          {"corrupt", imported->corrupt},
                          {"load_failed", imported->rejected},
                          {"not_loaded", not_loaded}}
                         .dump()
                  << "\n";
    } else {
        std::cout << "imported " << imported->imported << ", already present "
                  << imported->already_present << ", corrupt (skipped) " << imported->corrupt
                  << ", the driver cannot load (skipped) " << imported->rejected << " ("
                  << not_loaded << " not loaded: device absent)\n";
    }
    return imported->corrupt > 0 || imported->rejected > 0 ? static_cast<int>(Exit::action_needed)
                                                           : 0;
}

}  // namespace

Command gc_command() {
    return {{"gc",
             "[options]",
             "remove old entries and shrink the store to a size",
             "--older-than removes entries not used for that long; --max-size then evicts the\n"
             "least recently used entries until the stored bytes fit. At least one is needed.\n"
             "Values are checked: a size above 2^62 bytes or a duration above 100 years is a\n"
             "usage error, never a wrapped number. --failures instead forgets every failure\n"
             "record (`kcache ls --failures` lists them), so the next request compiles again.\n",
             {{"max-size", Arity::value, "SIZE", "keep at most SIZE stored bytes (500M, 2G)"},
              {"older-than", Arity::value, "DUR", "remove entries unused for DUR (30d, 12h)"},
              {"failures", Arity::flag, "", "clear the failure records instead"},
              {"json", Arity::flag, "", "print JSON"}},
             0,
             0,
             std::string(kExitOk) + kExitUsage + kExitStore},
            run_gc};
}

Command export_command() {
    return {{"export",
             "[options] PACK",
             "write entries of the user store to a new pack file",
             "Every entry is checksum-verified before it is written; the pack is an SQLite\n"
             "file of the store's schema that `kcache import` (or the runtime, as a\n"
             "read-only tier) reads. --sign KEY also writes PACK.minisig (see `kcache sign`).\n"
             "--manifest FILE exports exactly the entries built from a warm manifest's items\n"
             "(`kcache capture` writes one from traces), for every driver in the store and\n"
             "the devices each item names; an item with no entry is an error (exit 3).\n",
             {{"kernel", Arity::value, "NAME", "only entries of this kernel (name or alias)"},
              {"manifest", Arity::value, "FILE", "only the entries of this warm manifest's items"},
              {"sign", Arity::value, "KEY", "sign the pack with this secret key"}},
             1,
             1,
             std::string(kExitOk) + kExitUsage + kExitNotFound + kExitStore},
            run_export};
}

Command import_command() {
    return {{"import",
             "[options] PACK",
             "copy the entries of a pack into the user store",
             "Each entry's checksum is verified, and each binary whose device is present is\n"
             "loaded in the kcache-verify helper under a deadline (as `kcache verify`\n"
             "does); entries that do not verify or that the driver cannot load are skipped\n"
             "and counted. A pack written by a newer kcache (newer schema) is refused. With\n"
             "KCACHE_REQUIRE_SIGNED_PACKS a pack without a valid signature by a trusted key\n"
             "(PACK.minisig; see `kcache verify --pack`) is refused as the runtime refuses it.\n",
             {{"json", Arity::flag, "", "print JSON"}},
             1,
             1,
             std::string(kExitOk) +
                 "  1  some entries were corrupt or could not be loaded, and were skipped\n" +
                 kExitUsage + kExitNotFound +
                 "  4  the pack is malformed, of a newer schema or refused by the signature\n"
                 "     policy, or the store is unusable\n"},
            run_import};
}

}  // namespace kcache::cli
