// kcache devices: OpenCL devices (probed in a child under the watchdog) and
// sysfs GPUs, with their device-database match and AOT coverage.

#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "kcache/canary/install_paths.hpp"
#include "kcache/canary/pack_trust.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/device_db/sysfs.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/store/pack.hpp"
#include "probe.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

// What the installed (or given) packs hold: variants per ocloc target, and
// the coverage records of prebuild.
struct PackIndex {
    std::map<std::string, std::map<std::string, int>> variants;  // target → kernel → count
    std::vector<store::AotCoverage> coverage;
    std::vector<std::string> packs;
    std::vector<service::RefusedPack> refused;  // kept out by the signature policy
};

// The pack given by --pack, else the runtime's: KCACHE_PACKS (files or
// directories of *.kcpack) and the installed pack directory.
std::vector<std::filesystem::path> pack_paths(const ParsedArgs& args, const Config& config) {
    if (auto pack = args.value("pack")) {
        return {*pack};
    }
    std::vector<std::filesystem::path> roots = config.packs;
    for (auto& dir : service::installed_pack_dirs()) {
        roots.push_back(std::move(dir));
    }
    std::vector<std::filesystem::path> paths;
    for (const auto& root : roots) {
        std::error_code ec;
        if (!std::filesystem::is_directory(root, ec)) {
            paths.push_back(root);
            continue;
        }
        for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
            if (e.path().extension() == ".kcpack") {
                paths.push_back(e.path());
            }
        }
    }
    return paths;
}

PackIndex index_packs(const std::vector<std::filesystem::path>& paths, const Config& config) {
    PackIndex index;
    const auto keys = service::trusted_keys(config);
    for (const auto& path : service::pack_files(paths)) {  // existing files only
        auto checked = store::open_checked_pack(path, keys, service::signature_policy(config));
        if (checked.refused) {
            index.refused.push_back({path, *checked.refused});
            continue;
        }
        if (!checked.pack) {
            continue;
        }
        auto listed = checked.pack->list();
        if (!listed) {
            continue;
        }
        index.packs.push_back(path.string());
        for (const store::EntryInfo& e : *listed) {
            const std::string kernel =
                e.fields.kernel_name.substr(0, e.fields.kernel_name.find(':'));
            const std::string& format = e.fields.target_format;
            if (format.rfind("aot:", 0) == 0) {
                ++index.variants[format.substr(4)][kernel];
            }
        }
        const auto& records = checked.pack->aot_coverage();
        index.coverage.insert(index.coverage.end(), records.begin(), records.end());
    }
    return index;
}

// Per-kernel coverage of one device family: "aot" with counts, or "jit" and why.
json coverage_json(const device_db::FamilyRecord* family, const PackIndex& packs) {
    if (!family) {
        return {{"mode", "jit"}, {"why", "not an AOT target (no device-database family)"}};
    }
    for (const store::AotCoverage& r : packs.coverage) {
        if (r.family == family->name && r.status == store::CoverageStatus::not_targetable) {
            return {{"mode", "jit"}, {"why", r.detail}};
        }
    }
    if (family->ocloc == device_db::OclocSupport::unsupported) {
        return {
            {"mode", "jit"},
            {"why", "the installed ocloc cannot target " + family->ocloc_target +
                        (family->prefer_il ? "; SPIR-V preferred (kcache prebuild --il)" : "")}};
    }
    auto found = packs.variants.find(family->ocloc_target);
    if (found == packs.variants.end()) {
        return {{"mode", "jit"}, {"why", "no installed pack holds " + family->ocloc_target}};
    }
    json kernels = json::object();
    for (const kernels::KernelInfo& k : kernels::kernels()) {
        auto n = found->second.find(k.name);
        kernels[k.name] = {{"prebuilt", n == found->second.end() ? 0 : n->second},
                           {"variants", kernels::variants(k).size()}};
    }
    return {{"mode", "aot"}, {"target", family->ocloc_target}, {"kernels", kernels}};
}

json match_json(const device_db::DeviceMatch& m) {
    json j = {{"level", device_db::to_string(m.level)}};
    if (m.family) {
        j["family"] = m.family->name;
        j["codename"] = m.family->codename;
    }
    if (m.device) {
        j["product"] = m.device->product;
    }
    return j;
}

void print_text(const json& j) {
    for (const json& r : j["refused_packs"]) {
        std::cout << "pack " << r["pack"].get<std::string>()
                  << " not used (signature policy): " << r["reason"].get<std::string>() << "\n";
    }
    std::cout << "OpenCL devices";
    if (j.contains("probe_error")) {
        std::cout << ": probe failed: " << j["probe_error"].get<std::string>() << "\n";
    } else {
        std::cout << " (" << j["opencl"].size() << "):\n";
    }
    int index = 0;
    for (const json& d : j["opencl"]) {
        const json& id = d["identity"];
        std::cout << "  [" << index++ << "] " << id["name"].get<std::string>() << " ("
                  << id["type"].get<std::string>() << ", " << id["platform_name"].get<std::string>()
                  << ", driver " << id["driver_version"].get<std::string>() << ")\n"
                  << "      database: " << d["match"].dump() << "\n"
                  << "      coverage: " << d["coverage"].dump() << "\n";
    }
    std::cout << "sysfs GPUs (" << j["sysfs"].size() << "):\n";
    for (const json& g : j["sysfs"]) {
        std::cout << "  " << g["card"].get<std::string>() << " "
                  << g["vendor_id"].get<std::string>() << ":" << g["device_id"].get<std::string>()
                  << " driver " << g["driver"].get<std::string>()
                  << "\n      database: " << g["match"].dump()
                  << "\n      coverage: " << g["coverage"].dump() << "\n";
    }
}

int run_devices(const ParsedArgs& args) {
    auto timeout = args.duration_value("timeout");
    if (!timeout) {
        return report(Exit::usage, "devices", timeout.error().message);
    }
    int code = 0;
    auto config = load_cli_config("devices", code);
    if (!config) {
        return code;
    }
    auto db = load_device_db("devices", *config, code);
    if (!db) {
        return code;
    }
    // A pack named on the command line must be one: never judged as "no pack".
    if (auto pack = args.value("pack"); pack && !open_named_pack("devices", *pack, code)) {
        return code;
    }
    const PackIndex packs = index_packs(pack_paths(args, *config), *config);
    json out = {{"opencl", json::array()}, {"sysfs", json::array()}, {"packs", packs.packs}};
    out["refused_packs"] = json::array();
    for (const service::RefusedPack& r : packs.refused) {
        out["refused_packs"].push_back({{"pack", r.pack.string()}, {"reason", r.reason}});
    }
    auto probed = probe_devices(timeout->value_or(kDefaultProbeTimeout));
    if (probed) {
        for (const device_db::DeviceIdentity& id : *probed) {
            const auto m = db->match(id);
            out["opencl"].push_back({{"identity", identity_to_json(id)},
                                     {"match", match_json(m)},
                                     {"coverage", coverage_json(m.family, packs)}});
        }
    } else {
        out["probe_error"] = probed.error().message;
    }
    if (auto sysfs = device_db::list_sysfs_gpus()) {
        for (const device_db::SysfsGpu& g : sysfs->gpus) {
            const auto m = db->match(g.vendor_id, g.device_id);
            out["sysfs"].push_back({{"card", g.card},
                                    {"vendor_id", device_db::hex_id(g.vendor_id)},
                                    {"device_id", device_db::hex_id(g.device_id)},
                                    {"driver", g.driver},
                                    {"match", match_json(m)},
                                    {"coverage", coverage_json(m.family, packs)}});
        }
    }
    if (args.has("json")) {
        std::cout << out.dump(2) << "\n";
    } else {
        print_text(out);
    }
    return probed ? 0 : static_cast<int>(Exit::environment);
}

}  // namespace

Command devices_command() {
    return {{"devices",
             "[options]",
             "list OpenCL devices and GPUs with database match and AOT coverage",
             "OpenCL is initialised in a child process (`kcache devices --probe-child`, internal)\n"
             "killed after --timeout, since platform initialisation can hang; sysfs GPUs are\n"
             "listed without loading any driver. Coverage says, per device, whether prebuilt\n"
             "binaries exist for each kernel in the installed packs (<prefix>/share/kcache/packs"
             ") or\nwhy the runtime will compile just in time. Packs the signature policy\n"
             "keeps out (KCACHE_REQUIRE_SIGNED_PACKS) count for nothing; each is listed\n"
             "with the reason.\n",
             {{"json", Arity::flag, "", "print JSON"},
              {"timeout", Arity::value, "DUR", "bound on the OpenCL probe (default 30s)"},
              {"pack", Arity::value, "FILE", "judge coverage against this pack instead"}},
             0,
             0,
             std::string(kExitOk) + kExitUsage + "  3  the --pack file does not exist\n" +
                 "  4  the --pack file is not a pack (or not a regular file)\n" +
                 "  5  the OpenCL probe failed or timed out (sysfs GPUs are still listed)\n"},
            run_devices};
}

}  // namespace kcache::cli
