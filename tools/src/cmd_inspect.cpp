// kcache ls, stats and get: read what the user store (or a pack) holds.

#include <unistd.h>

#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "entries.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/store/pack.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

struct Filters {
    std::string kernel;  // canonical name, or the text given when no kernel has it
    std::string device;  // substring of the device name
    std::string origin;
    std::string verified;
};

bool matches(const store::EntryInfo& e, const Filters& f) {
    const std::string& name = e.fields.kernel_name;
    const bool kernel_ok =
        f.kernel.empty() || name == f.kernel || name.rfind(f.kernel + ":", 0) == 0;
    const bool device_ok =
        f.device.empty() || entry_device(e.fields).find(f.device) != std::string::npos;
    const bool origin_ok = f.origin.empty() || f.origin == origin_name(e.provenance.origin);
    const bool verified_ok = f.verified.empty() || f.verified == verification_name(e.verification);
    return kernel_ok && device_ok && origin_ok && verified_ok;
}

Result<Filters, std::string> read_filters(const ParsedArgs& args) {
    Filters f{args.value("kernel").value_or(""), args.value("device").value_or(""),
              args.value("origin").value_or(""), args.value("verified").value_or("")};
    if (!f.kernel.empty()) {
        if (auto canonical = kernels::resolve(f.kernel)) {
            f.kernel = *canonical;
        }
    }
    if (!f.origin.empty() && f.origin != "jit" && f.origin != "aot" && f.origin != "import") {
        return fail("--origin: expected jit, aot or import, got '" + f.origin + "'");
    }
    if (!f.verified.empty() && f.verified != "passed" && f.verified != "failed" &&
        f.verified != "unverified") {
        return fail("--verified: expected passed, failed or unverified, got '" + f.verified + "'");
    }
    return f;
}

int run_ls(const ParsedArgs& args) {
    auto filters = read_filters(args);
    if (!filters) {
        return report(Exit::usage, "ls", filters.error());
    }
    int code = 0;
    auto entries = list_entries("ls", args.value("pack"), code);
    if (!entries) {
        return code;
    }
    json out = json::array();
    for (const store::EntryInfo& e : *entries) {
        if (!matches(e, *filters)) {
            continue;
        }
        if (args.has("json")) {
            out.push_back(entry_to_json(e));
        } else {
            std::cout << e.key.hex().substr(0, 16) << "  " << e.fields.kernel_name << "  "
                      << entry_device(e.fields) << "  " << origin_name(e.provenance.origin) << "  "
                      << human_size(e.raw_size) << "  " << verification_name(e.verification)
                      << "  last used " << format_time(e.last_use_ms) << "\n";
        }
    }
    if (args.has("json")) {
        std::cout << out.dump(2) << "\n";
    }
    return 0;
}

json tier_json(const store::TierStats& t) {
    json misses = json::object();
    for (std::size_t r = 0; r < store::kMissReasonCount; ++r) {
        misses[store::to_string(static_cast<store::MissReason>(r))] = t.misses[r];
    }
    return {{"name", t.name}, {"hits", t.hits}, {"misses", misses}};
}

int run_stats(const ParsedArgs& args) {
    int code = 0;
    auto store = open_user_store("stats", code);
    if (!store) {
        return code;
    }
    auto stats = store->stats();
    if (!stats) {
        return report(exit_for(stats.error()), "stats", stats.error().message);
    }
    json j = {{"store", store->path().string()}, {"entries", stats->entries},
              {"raw_bytes", stats->raw_bytes},   {"stored_bytes", stats->stored_bytes},
              {"evictions", stats->evictions},   {"corruptions", stats->corruptions},
              {"tiers", json::array()}};
    for (const store::TierStats& t : stats->tiers) {
        j["tiers"].push_back(tier_json(t));
    }
    if (args.has("json")) {
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::cout << "store        " << store->path().string() << "\nentries      " << stats->entries
              << "\nsize         " << human_size(stats->raw_bytes) << " ("
              << human_size(stats->stored_bytes) << " stored)\nevictions    " << stats->evictions
              << "\ncorruptions  " << stats->corruptions << "\n";
    for (const json& t : j["tiers"]) {
        std::cout << "tier " << t["name"].get<std::string>() << ": " << t["hits"]
                  << " hits, misses " << t["misses"].dump() << "\n";
    }
    return 0;
}

int write_bytes(const store::Bytes& bytes, const std::optional<std::string>& output) {
    if (!output) {
        if (::isatty(STDOUT_FILENO)) {
            return report(Exit::usage, "get", "refusing to write a binary to a terminal; use -o");
        }
        std::cout.write(reinterpret_cast<const char*>(bytes.data()),
                        static_cast<std::streamsize>(bytes.size()));
        return std::cout ? 0 : report(Exit::store_error, "get", "cannot write to stdout");
    }
    std::ofstream out(*output, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    return out ? 0 : report(Exit::store_error, "get", "cannot write " + *output);
}

int run_get(const ParsedArgs& args) {
    int code = 0;
    auto store = open_user_store("get", code);
    if (!store) {
        return code;
    }
    auto key = resolve_key(*store, args.positionals()[0], "get", code);
    if (!key) {
        return code;
    }
    auto entry = store->get(*key);
    if (!entry) {
        return report(
            entry.error().reason == store::MissReason::not_found ? Exit::not_found
                                                                 : Exit::store_error,
            "get",
            std::string(store::to_string(entry.error().reason)) + ": " + entry.error().detail);
    }
    if (args.has("info")) {
        std::cout << entry_to_json(entry->info).dump(2) << "\n";
        return 0;
    }
    return write_bytes(entry->bytes, args.value("output"));
}

}  // namespace

Command ls_command() {
    return {{"ls",
             "[options]",
             "list cache entries (user store, or a pack)",
             "Filters combine (all must hold). --kernel accepts names and aliases and matches\n"
             "every variant of the kernel.\n",
             {{"kernel", Arity::value, "NAME", "only this kernel (name or alias)"},
              {"device", Arity::value, "TEXT", "only devices whose name contains TEXT"},
              {"origin", Arity::value, "KIND", "only jit, aot or import entries"},
              {"verified", Arity::value, "STATE", "only passed, failed or unverified entries"},
              {"pack", Arity::value, "FILE", "list this pack instead of the user store"},
              {"json", Arity::flag, "", "print a JSON array of entries"}},
             0,
             0,
             std::string(kExitOk) + kExitUsage + kExitNotFound + kExitStore},
            run_ls};
}

Command stats_command() {
    return {{"stats",
             "[options]",
             "show store size, entries and hit/miss counters",
             "",
             {{"json", Arity::flag, "", "print JSON"}},
             0,
             0,
             std::string(kExitOk) + kExitUsage + kExitStore},
            run_stats};
}

Command get_command() {
    return {{"get",
             "[options] KEY",
             "write the binary of one entry (KEY: hex key or prefix)",
             "KEY is a full 64-digit key or a unique prefix of at least 8 digits, as `kcache\n"
             "ls` prints it. The checksum is verified before any byte is written.\n",
             {{"output", Arity::value, "FILE", "write the binary here (default: stdout)"},
              {"info", Arity::flag, "", "print the entry's metadata as JSON instead"}},
             1,
             1,
             std::string(kExitOk) + kExitUsage + kExitNotFound + kExitStore},
            run_get};
}

}  // namespace kcache::cli
