// kcache ls, stats and get: read what the user store (or a pack) holds.

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "entries.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/store/key.hpp"
#include "kcache/store/pack.hpp"
#include "remote_cli.hpp"
#include "reports/canary_report.hpp"
#include "reports/stats_metrics.hpp"
#include "run_layer.hpp"

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

// `ls --failures`: the user store's failure records, latest first.
int run_ls_failures(const ParsedArgs& args) {
    int code = 0;
    auto store = open_user_store("ls", code);
    if (!store) {
        return code;
    }
    auto records = store->list_failures();
    if (!records) {
        return report(exit_for(records.error()), "ls", records.error().message);
    }
    const store::TimeMs now = store::now_ms(store::Policy{});
    json out = json::array();
    for (const store::FailureRecord& r : *records) {
        out.push_back(failure_to_json(r, now));
        if (args.has("json")) {
            continue;
        }
        const std::string detail = r.detail.substr(0, r.detail.find('\n'));
        std::cout << r.key.hex().substr(0, 16) << "  " << store::to_string(r.kind) << "  seen "
                  << r.count << "x, last " << format_time(r.last_seen_ms)
                  << (r.expires_ms <= now ? "  expired" : "  until " + format_time(r.expires_ms))
                  << (r.kind == store::FailureKind::timeout && r.budget_ms > 0
                          ? "  budget " + std::to_string(r.budget_ms) + " ms"
                          : "")
                  << "\n    " << detail << "\n";
    }
    if (args.has("json")) {
        std::cout << out.dump(2) << "\n";
    }
    return 0;
}

int run_ls(const ParsedArgs& args) {
    if (auto conflict = args.exclusive({"failures", "pack"}); !conflict) {
        return report(Exit::usage, "ls", conflict.error().message);
    }
    if (args.has("failures")) {
        return run_ls_failures(args);
    }
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
    std::size_t shown = 0;
    for (const store::EntryInfo& e : *entries) {
        if (!matches(e, *filters)) {
            continue;
        }
        ++shown;
        if (args.has("json")) {
            out.push_back(entry_to_json(e));
        } else {
            std::cout << e.key.hex().substr(0, 16) << "  " << e.fields.kernel_name << "  "
                      << entry_device(e.fields) << "  " << origin_name(e.provenance.origin) << "  "
                      << human_size(e.raw_size) << "  " << verification_name(e.verification)
                      << "  last used " << format_time(e.last_use_ms) << "\n";
        }
    }
    // A name that is neither a known kernel nor on any entry is a typo, not
    // an empty result (exit 3, as --help says).
    if (shown == 0 && !filters->kernel.empty() && !kernels::resolve(filters->kernel)) {
        return report(Exit::not_found, "ls", "unknown kernel '" + filters->kernel + "'");
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

// `kcache stats`'s text form: the store's figures, then the report `j`'s
// tiers, remote and layer counters, and the canary's verdicts.
void print_stats(const store::Stats& stats, const json& j,
                 const std::vector<CanaryLine>& canary_lines) {
    std::cout << "store        " << j["store"].get<std::string>() << "\nentries      "
              << stats.entries << "\nsize         " << human_size(stats.raw_bytes) << " ("
              << human_size(stats.stored_bytes) << " stored)\nevictions    " << stats.evictions
              << "\ncorruptions  " << stats.corruptions << "\n";
    for (const json& t : j["tiers"]) {
        std::cout << "tier " << t["name"].get<std::string>() << ": " << t["hits"]
                  << " hits, misses " << t["misses"].dump() << "\n";
    }
    std::cout << "remote      ";
    for (const auto& [name, n] : j["remote"].items()) {
        std::cout << " " << name << " " << n.get<std::uint64_t>();
    }
    for (const auto& [ns, counters] : j["remote_namespaces"].items()) {
        std::cout << "\nremote ns " << ns << ":";
        for (const auto& [name, n] : counters.items()) {
            std::cout << " " << name << " " << n.get<std::uint64_t>();
        }
    }
    std::cout << "\nlayer       ";
    for (const auto& [name, n] : j["layer"].items()) {
        std::cout << " " << name << " " << n.get<std::uint64_t>();
    }
    std::cout << "\n";
    for (const CanaryLine& line : canary_lines) {
        std::cout << "canary       " << line.text << "\n";
    }
    if (canary_lines.empty()) {
        std::cout << "canary       no verdicts\n";
    }
}

int run_stats(const ParsedArgs& args) {
    const std::string format = args.value("format").value_or(args.has("json") ? "json" : "text");
    if (format != "text" && format != "json" && format != "openmetrics" && format != "prometheus") {
        return report(Exit::usage, "stats",
                      "--format: expected text, json, openmetrics or prometheus, got " + format);
    }
    int code = 0;
    auto store = open_user_store("stats", code);
    if (!store) {
        return code;
    }
    auto stats = store->stats();
    if (!stats) {
        return report(exit_for(stats.error()), "stats", stats.error().message);
    }
    if (format == "openmetrics" || format == "prometheus") {
        auto entries = store->list();
        if (!entries) {
            return report(exit_for(entries.error()), "stats", entries.error().message);
        }
        std::cout << node_metrics(
            *store, *stats, *entries,
            format == "openmetrics" ? metrics::Format::openmetrics : metrics::Format::prometheus);
        return 0;
    }
    json j = {{"store", store->path().string()}, {"entries", stats->entries},
              {"raw_bytes", stats->raw_bytes},   {"stored_bytes", stats->stored_bytes},
              {"evictions", stats->evictions},   {"corruptions", stats->corruptions},
              {"tiers", json::array()}};
    for (const store::TierStats& t : stats->tiers) {
        j["tiers"].push_back(tier_json(t));
    }
    j["remote"] = remote_stats_json(store->path().parent_path());
    j["remote_namespaces"] = remote_namespace_stats_json(store->path().parent_path());
    j["layer"] = layer_counters_json(store->path().parent_path());
    const auto canary_lines = canary_summary(store->path().parent_path());
    j["canary"] = json::array();
    for (const CanaryLine& line : canary_lines) {
        j["canary"].push_back(line.json);
    }
    if (format == "json") {
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    print_stats(*stats, j, canary_lines);
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

// What is wrong when the store lists an entry under `key` but get(`key`)
// missed with `miss`, or the entry it read does not hash to `key`.
std::string unreadable_entry(store::Store& store, const store::Key& key, const store::Miss& miss) {
    const std::string k = key.hex().substr(0, 16);
    if (miss.reason != store::MissReason::not_found || !miss.detail.empty()) {
        return std::string(store::to_string(miss.reason)) + ": " + miss.detail;
    }
    auto listed = store.list();
    const bool still_listed =
        listed && std::any_of(listed->begin(), listed->end(),
                              [&](const store::EntryInfo& e) { return e.key == key; });
    return still_listed ? "entry " + k +
                              " is listed but no row has that key: its key column is not the "
                              "key in 64 lower-case hex digits (the row was altered outside "
                              "kcache, and nothing can read it)"
                        : "entry " + k + " is no longer in the store (removed meanwhile)";
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
        return report(Exit::store_error, "get", unreadable_entry(*store, *key, entry.error()));
    }
    if (const store::Key hashed = store::make_key(entry->info.fields); hashed != *key) {
        return report(Exit::store_error, "get",
                      "entry " + key->hex().substr(0, 16) + " is damaged: its fields hash to key " +
                          hashed.hex().substr(0, 16) +
                          ", not to its own (the row was altered outside kcache; the runtime "
                          "never serves it)");
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
             "every variant of the kernel; a name that is no known kernel and on no entry\n"
             "exits 3. --failures lists the remembered compile failures instead (kind,\n"
             "count, expiry, the time budget of a timeout, the message); a timeout holds\n"
             "back only requests with a budget no larger than its own. `kcache gc\n"
             "--failures` clears them.\n",
             {{"kernel", Arity::value, "NAME", "only this kernel (name or alias)"},
              {"device", Arity::value, "TEXT", "only devices whose name contains TEXT"},
              {"origin", Arity::value, "KIND", "only jit, aot or import entries"},
              {"verified", Arity::value, "STATE", "only passed, failed or unverified entries"},
              {"pack", Arity::value, "FILE", "list this pack instead of the user store"},
              {"failures", Arity::flag, "", "list failure records instead of entries"},
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
             "The remote line counts, for every process of this node since the store was\n"
             "created: hits, misses, errors, timeouts, corrupt objects, uploads and upload\n"
             "failures of the remote tier (KCACHE_REMOTE); a 'remote ns' line per namespace\n"
             "(KCACHE_REMOTE_NAMESPACE) counts the lookups asked of it (a lookup counts in\n"
             "each namespace it tried) and, for the own namespace, the uploads.\n"
             "The layer line counts the program builds of applications run under the\n"
             "OpenCL layer (kcache run): hits, compiles, failures, builds passed through.\n"
             "A canary line per driver sums the driver canary's stored verdicts\n"
             "(validated, suspect with the failing checks, not run; kcache canary --show).\n"
             "--format openmetrics prints the store's sizes by device and the node's\n"
             "counters in the OpenMetrics text format (prometheus: the Prometheus text\n"
             "format of node_exporter's textfile collector); tools/README.md lists them.\n",
             {{"json", Arity::flag, "", "print JSON (--format json)"},
              {"format", Arity::value, "FMT", "text, json, openmetrics or prometheus"}},
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
