// kcache doctor: the effective configuration and where each value came
// from, the cache directory's permissions, ICDs, ocloc and driver notes.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "kcache/canary/install_paths.hpp"
#include "kcache/canary/pack_trust.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/compiler/jit.hpp"
#include "kcache/compiler/ocloc.hpp"
#include "kcache/config/setting_table.hpp"
#include "kcache/config/text.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/device_db/sysfs.hpp"
#include "probe.hpp"
#include "remote_cli.hpp"
#include "reports/canary_report.hpp"
#include "reports/errata_report.hpp"
#include "reports/stats_metrics.hpp"
#include "run_layer.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

enum class Level { ok, note, problem };

struct Finding {
    std::string section;
    std::string name;
    std::string value;
    Level level = Level::ok;
};

const char* level_name(Level l) {
    return l == Level::ok ? "ok" : l == Level::note ? "note" : "problem";
}

// The settings that are a search path: the trusted keys and the packs, each
// with where the runtime looks after them.
std::string search_path_effective(const Config& c, const std::string& name) {
    if (name == "trusted_keys") {
        std::string dirs;
        for (const auto& d : c.trusted_key_dirs) {
            dirs += (dirs.empty() ? "" : ", ") + d.string() + "/*.pub";
        }
        std::string files;
        for (const auto& f : c.trusted_keys) {
            files += (files.empty() ? "" : ":") + f.string();
        }
        return dirs + ", then " + (files.empty() ? std::string("(none)") : files);
    }
    std::string packs;
    for (const auto& p : c.packs) {
        packs += (packs.empty() ? "" : ":") + p.string();
    }
    std::string installed;
    for (const auto& d : service::installed_pack_dirs()) {
        installed += (installed.empty() ? "" : ", ") + d.string();
    }
    return (packs.empty() ? std::string("(none)") : packs) + ", then " + installed;
}

// Setting `name`'s value read by its kind (kcache_settings.def): a flag as
// true or false, a size also in K/M/G, nothing as "(none)".
std::string value_by_kind(const Config& c, const std::string& name) {
    const service::SettingRow* row = service::find_setting(name);
    if (row == nullptr || row->text == nullptr) {
        const auto it = c.origins.find(name);
        return it != c.origins.end() ? it->second.first : std::string();
    }
    const std::string text = row->text(*row, c);
    if (row->kind == service::SettingKind::flag) {
        return text == "1" ? "true" : "false";
    }
    if (row->kind == service::SettingKind::size) {
        return text + " (" + human_size(std::stoull(text)) + ")";
    }
    return text.empty() ? "(none)" : text;
}

// The effective value of setting `name` as the runtime uses it.
std::string effective(const Config& c, const std::string& name) {
    if (name.rfind("remote", 0) == 0) {
        return remote_effective(c, name);
    }
    if (name.rfind("metrics", 0) == 0 || name.rfind("trace", 0) == 0) {
        return observe_effective(c, name);
    }
    if (name == "jit_helpers") {
        return std::to_string(c.jit_helpers) +
               (c.jit_helpers == 0 ? " (a fresh helper per compile)" : " per device");
    }
    if (name == "jit_path") {
        return c.jit_helper.empty() ? compiler::default_helper_path() : c.jit_helper;
    }
    if (name == "canary") {
        return c.canary == CanaryPolicy::off ? "off (no canary runs)"
               : c.canary == CanaryPolicy::warn
                   ? "warn (a suspect variant is served, with a warning)"
                   : "enforce (a suspect variant is answered driver_suspect)";
    }
    if (name == "packs" || name == "trusted_keys") {
        return search_path_effective(c, name);
    }
    return value_by_kind(c, name);
}

// Each KCACHE_* variable of the environment that kcache does not know, with
// the closest name it knows: a typo changes nothing, so it is a problem.
void check_unknown_variables(std::vector<Finding>& out) {
    for (const service::UnknownVariable& u : service::unknown_variables(environ)) {
        out.push_back(
            {"config", u.name,
             "\"" + service::printable(u.value) + "\": unknown; did you mean " + u.suggestion + "?",
             Level::problem});
    }
}

void check_config(std::vector<Finding>& out, const Config& config) {
    for (const auto& [name, setting] : config.origins) {
        out.push_back(
            {"config", name, effective(config, name) + "  [" + to_string(setting.second) + "]"});
    }
    for (const auto& p : config.packs) {
        std::error_code ec;
        if (!std::filesystem::exists(p, ec)) {
            out.push_back({"config", "packs",
                           p.string() + " does not exist (a KCACHE_PACKS entry; the runtime "
                                        "skips it with a warning)",
                           Level::problem});
        }
    }
}

// Trusted keys, and each pack the runtime would open with its signature and
// whether the signature policy lets the runtime use it.
void check_signatures(std::vector<Finding>& out, const Config& config) {
    const auto keys = service::trusted_keys(config);
    for (const store::TrustedKey& k : keys.keys()) {
        out.push_back({"trust", "key " + store::key_id_hex(k.key.id), k.source.string()});
    }
    for (const std::string& problem : keys.problems()) {
        out.push_back({"trust", "key file", problem, Level::problem});
    }
    const auto policy = service::signature_policy(config);
    for (const auto& pack : service::runtime_pack_files(config)) {
        const auto sig = store::check_pack_signature(pack, keys);
        const auto refused = store::refusal(sig, policy);
        Finding f{"packs", pack.string(),
                  std::string(store::to_string(sig.state)) + ": " + sig.detail};
        if (refused) {
            f = {"packs", pack.string(), "not used: " + *refused, Level::problem};
        } else if (sig.state == store::SignatureState::invalid) {
            f.level = Level::problem;
            f.value += " (used: signed packs are not required)";
        }
        out.push_back(f);
    }
}

void check_store_dir(std::vector<Finding>& out, const std::filesystem::path& dir) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
        out.push_back({"store", "directory",
                       dir.string() + " does not exist yet (created 0700 on "
                                      "first use)",
                       Level::note});
        return;
    }
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    Finding f{"store", "directory", dir.string() + " mode " + mode};
    if (st.st_uid != ::getuid()) {
        f = {"store", "directory",
             f.value + ": owned by uid " + std::to_string(st.st_uid) +
                 ", not you; the runtime refuses it",
             Level::problem};
    } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        f = {"store", "directory",
             f.value +
                 ": writable by others; the runtime refuses it "
                 "(chmod 700)",
             Level::problem};
    } else if (::access(dir.c_str(), W_OK) != 0) {
        f = {"store", "directory", f.value + ": not writable; the store opens read-only",
             Level::problem};
    }
    out.push_back(f);
}

void check_icds(std::vector<Finding>& out) {
    const char* vendors_env = std::getenv("OCL_ICD_VENDORS");
    const std::filesystem::path vendors = vendors_env ? vendors_env : "/etc/OpenCL/vendors";
    std::error_code ec;
    int found = 0;
    for (const auto& e : std::filesystem::directory_iterator(vendors, ec)) {
        if (e.path().extension() != ".icd") {
            continue;
        }
        auto text = read_regular_file(e.path(), 4096);  // one line naming a library
        const std::string library =
            text ? text->substr(0, text->find('\n')) : "not read: " + text.error().message;
        out.push_back({"opencl", "icd " + e.path().filename().string(), library,
                       text ? Level::ok : Level::problem});
        ++found;
    }
    std::error_code sysfs_ec;
    if (std::filesystem::exists(vendors / "intel.icd", sysfs_ec)) {
        auto gpus = device_db::list_sysfs_gpus();
        const bool intel_gpu =
            gpus && std::any_of(gpus->gpus.begin(), gpus->gpus.end(),
                                [](const auto& g) { return g.vendor_id == 0x8086; });
        if (!intel_gpu) {
            out.push_back({"opencl", "intel.icd",
                           "installed, but sysfs shows no Intel GPU: it "
                           "offers no device here",
                           Level::note});
        }
    }
    if (found == 0) {
        out.push_back({"opencl", "icd",
                       "no .icd files in " + vendors.string() + ": no OpenCL driver is installed",
                       Level::problem});
    }
}

// Whether `kcache run` can work: the loader loads layers, the layer exists.
void check_layer(std::vector<Finding>& out) {
    std::string detail;
    const bool layers = loader_supports_layers(detail);
    out.push_back({"opencl", "layers", detail, layers ? Level::ok : Level::note});
    const std::string layer = layer_library_path();
    std::error_code ec;
    const bool present = std::filesystem::exists(layer, ec);
    out.push_back({"opencl", "layer", layer + (present ? "" : " (missing: kcache run cannot work)"),
                   present ? Level::ok : Level::note});
}

void check_ocloc(std::vector<Finding>& out, const Config& config) {
    const compiler::OclocCompiler ocloc(ocloc_config(config));
    auto id = ocloc.identity(deadline_after(std::chrono::seconds(60)));
    if (!id) {
        out.push_back(
            {"ocloc", "version",
             "unavailable (" + id.error().message + "): prebuild is impossible, JIT still works",
             Level::note});
        return;
    }
    out.push_back({"ocloc", "version", id->ocloc_version});
    out.push_back({"ocloc", "igc", id->igc_path});
}

void check_drivers(std::vector<Finding>& out, const Config& config,
                   std::chrono::milliseconds timeout) {
    auto db = device_db::DeviceDb::with_override(config.device_db);
    if (!db) {
        out.push_back({"driver", "device_db", db.error().message, Level::problem});
    }
    auto devices = probe_devices(timeout);
    if (!devices) {
        out.push_back({"driver", "probe", devices.error().message, Level::problem});
        return;
    }
    if (devices->empty()) {
        out.push_back({"driver", "devices", "no OpenCL device found", Level::problem});
    }
    for (const device_db::DeviceIdentity& id : *devices) {
        out.push_back({"driver", "device", describe(id)});
        if (!db) {
            continue;
        }
        const auto m = db->match(id);
        if (m.family && !m.family->notes.empty()) {
            out.push_back({"driver", id.name, m.family->notes, Level::note});
        }
        for (const device_db::QuirkRule* rule : db->quirks_for(id).rules) {
            out.push_back({"driver", "quirk " + rule->id, rule->notes, Level::note});
        }
    }
}

// The settings table of docs/settings.md, printed from the rows (a docs
// test keeps the two the same).
void print_settings_table() {
    std::cout << "| Variable | Config key | Accepts | What it does |\n|---|---|---|---|\n";
    for (const service::SettingRow& r : service::setting_rows()) {
        if (r.configurable()) {
            std::cout << "| `" << r.env << "` | `" << r.key << "` | " << service::accepted(r)
                      << " | " << r.doc << " |\n";
        }
    }
}

int run_doctor(const ParsedArgs& args) {
    if (args.has("settings-table")) {
        print_settings_table();
        return 0;
    }
    auto timeout = args.duration_value("timeout");
    if (!timeout) {
        return report(Exit::usage, "doctor", timeout.error().message);
    }
    int code = 0;
    auto config = load_cli_config("doctor", code);
    if (!config) {
        return code;
    }
    std::vector<Finding> findings;
    check_unknown_variables(findings);
    check_config(findings, *config);
    check_store_dir(findings, config->dir);
    check_signatures(findings, *config);
    check_icds(findings);
    check_layer(findings);
    check_ocloc(findings, *config);
    check_drivers(findings, *config, timeout->value_or(kDefaultProbeTimeout));
    for (const CanaryLine& line : canary_summary(config->dir)) {
        findings.push_back(
            {"canary", "verdicts", line.text, line.suspect ? Level::problem : Level::ok});
    }
    for (const FeedLine& line : errata_feed_lines(config->dir)) {
        findings.push_back({"errata", "feed", line.text,
                            line.damaged ? Level::problem
                            : line.stale ? Level::note
                                         : Level::ok});
    }
    for (const RemoteCheck& r : remote_checks(*config)) {
        findings.push_back({"remote", r.name, r.detail, r.ok ? Level::ok : Level::problem});
    }
    bool problems = false;
    json j = json::array();
    for (const Finding& f : findings) {
        problems = problems || f.level == Level::problem;
        j.push_back({{"section", f.section},
                     {"name", f.name},
                     {"value", f.value},
                     {"level", level_name(f.level)}});
        if (!args.has("json")) {
            std::cout << (f.level == Level::problem ? "PROBLEM "
                          : f.level == Level::note  ? "note    "
                                                    : "        ")
                      << f.section << "." << f.name << ": " << f.value << "\n";
        }
    }
    if (args.has("json")) {
        std::cout << j.dump(2) << "\n";
    }
    return problems ? static_cast<int>(Exit::action_needed) : 0;
}

}  // namespace

Command doctor_command() {
    return {
        {"doctor",
         "[options]",
         "check configuration, store permissions, ICDs, ocloc, drivers",
         "Prints the effective configuration with the origin of every value ([environment],\n"
         "[default …]), the store directory's owner and mode, the OpenCL ICDs registered\n"
         "in /etc/OpenCL/vendors (or $OCL_ICD_VENDORS), ocloc's version, and notes and\n"
         "quirk rules of the device database for each OpenCL device (probed in a child).\n"
         "With a remote tier (KCACHE_REMOTE), each server is probed: GET and HEAD of a\n"
         "probe key for everyone, PUT and DELETE of a probe object for writers; an open\n"
         "circuit breaker is shown.\n"
         "A KCACHE_PACKS entry that does not exist is a problem.\n"
         "It lists the trusted public keys and, for every pack the runtime would open, its\n"
         "signature; a pack the signature policy keeps out (KCACHE_REQUIRE_SIGNED_PACKS)\n"
         "or whose signature is invalid is a PROBLEM with the reason.\n"
         "A KCACHE_* variable that is no setting is a PROBLEM, with the closest name.\n",
         {{"json", Arity::flag, "", "print JSON"},
          {"settings-table", Arity::flag, "", "print the table of settings (Markdown) and exit"},
          {"timeout", Arity::value, "DUR", "bound on the OpenCL probe (default 30s)"}},
         0,
         0,
         std::string(kExitOk) + "  1  a problem was found (lines marked PROBLEM)\n" + kExitUsage},
        run_doctor};
}

}  // namespace kcache::cli
