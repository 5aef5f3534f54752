// kcache explain: why a lookup misses. Computes the key the runtime would
// use for a kernel variant on a device (the service's jit_key_fields) and
// diffs it field by field against the nearest stored entries.

#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "entries.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/service/keys.hpp"
#include "opencl_devices.hpp"
#include "remote_cli.hpp"
#include "reports/canary_report.hpp"
#include "reports/errata_report.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

constexpr std::size_t kDefaultLimit = 3;

// One near entry: its key and, per differing field, (wanted, stored).
json near_json(const store::NearEntry& near, const json& wanted) {
    const json stored = fields_to_json(near.info.fields);
    json diff = json::array();
    for (const std::string& field : near.differing) {
        diff.push_back({{"field", field},
                        {"wanted", wanted.value(field, json())},
                        {"stored", stored.value(field, json())}});
    }
    return {
        {"key", near.info.key.hex()}, {"kernel", near.info.fields.kernel_name}, {"differs", diff}};
}

// The remote rung for `key`: present, absent, or why it could not be asked.
std::string remote_state(remote::Client* remote, const store::Key& key) {
    if (remote == nullptr) {
        return "not configured (KCACHE_REMOTE)";
    }
    auto there = remote->exists(key);
    if (!there) {
        return std::string(remote::to_string(there.error().code)) + ": " + there.error().message;
    }
    return *there ? "present at " + remote->object_url(key) : "absent";
}

json explain_device(store::Store& store, const device_db::DeviceDb& db,
                    const device_db::DeviceIdentity& id, const kernels::Rendered& r,
                    std::size_t limit, remote::Client* remote) {
    const device_db::CompileInput input{r.variant.id(), r.source, r.options, r.entry_points};
    const store::KeyFields fields = device_db::jit_key_fields(id, input);
    const json wanted = fields_to_json(fields);
    json out = {{"device", id.name},
                {"key", store::make_key(fields).hex()},
                {"wanted", wanted},
                {"aot_target", service::aot_target(db, id).value_or("")}};
    auto info = store.info(store::make_key(fields));
    if (info && *info) {
        out["state"] = "hit";
        return out;
    }
    out["state"] = "miss";
    out["remote"] = remote_state(remote, store::make_key(fields));
    // A fresh failure record answers this key at once (the ladder's rung 4).
    if (auto failure = store.find_fresh_failure(store::make_key(fields)); failure && *failure) {
        out["failure"] = failure_to_json(**failure, store::now_ms(store::Policy{}));
    }
    out["nearest"] = json::array();
    if (auto near = store.nearest(fields, limit)) {
        for (const store::NearEntry& n : *near) {
            out["nearest"].push_back(near_json(n, wanted));
        }
    }
    return out;
}

void print_text(const json& d) {
    std::cout << d["device"].get<std::string>() << ": " << d["state"].get<std::string>() << " (key "
              << d["key"].get<std::string>().substr(0, 16) << ")\n";
    const json& c = d["canary"];
    std::cout << "  driver canary: " << c["state"].get<std::string>();
    if (c.contains("check") && !c["check"].get<std::string>().empty()) {
        std::cout << " (" << c["check"].get<std::string>() << ", seed " << c["seed"] << ", "
                  << c["variant"].get<std::string>() << ")";
    }
    std::cout << ", policy " << c["policy"].get<std::string>() << "\n";
    if (const json& e = d["erratum"]; !e.is_null()) {
        std::cout << "  erratum " << e["id"].get<std::string>() << " ("
                  << e["source"].get<std::string>() << "): " << e["erratum"].get<std::string>()
                  << "\n";
    }
    if (d["state"] == "hit") {
        return;
    }
    std::cout << "  remote: " << d["remote"].get<std::string>() << "\n";
    if (d.contains("failure")) {
        const json& f = d["failure"];
        const std::string detail = f["detail"].get<std::string>();
        const std::size_t nl = detail.find('\n');
        std::cout << "  failure record: " << f["kind"].get<std::string>() << ", seen "
                  << f["count"].get<std::uint64_t>() << "x, until "
                  << f["expires"].get<std::string>();
        if (f["kind"] == "timeout" && f["budget_ms"].get<std::int64_t>() > 0) {
            std::cout << ", under a budget of " << f["budget_ms"].get<std::int64_t>()
                      << " ms (a larger one tries again)";
        }
        std::cout << " (`kcache gc --failures` clears it)\n    " << detail.substr(0, nl) << "\n";
        if (nl != std::string::npos) {
            std::istringstream log(trim_log(detail.substr(nl + 1), 60));
            for (std::string line; std::getline(log, line);) {
                std::cout << "    " << line << "\n";
            }
        }
    }
    if (d["nearest"].empty()) {
        std::cout << "  the store holds no entry to compare with\n";
    }
    for (const json& n : d["nearest"]) {
        std::cout << "  nearest " << n["key"].get<std::string>().substr(0, 16) << " ("
                  << n["kernel"].get<std::string>() << ") differs in " << n["differs"].size()
                  << " field(s):\n";
        for (const json& f : n["differs"]) {
            std::cout << "    " << f["field"].get<std::string>() << ": wanted "
                      << f["wanted"].dump() << ", stored " << f["stored"].dump() << "\n";
        }
    }
}

int run_explain(const ParsedArgs& args) {
    auto limit = args.uint_value("limit", 1);
    if (!limit) {
        return report(Exit::usage, "explain", limit.error().message);
    }
    auto variant = kernels::parse_variant(args.positionals()[0]);
    if (!variant) {
        return report(variant.error().code == kernels::KernelErrc::malformed_variant
                          ? Exit::usage
                          : Exit::not_found,
                      "explain", variant.error().message);
    }
    auto rendered = kernels::render(*variant);
    if (!rendered) {
        return report(Exit::store_error, "explain", rendered.error().message);
    }
    int code = 0;
    auto config = load_cli_config("explain", code);
    auto db = config ? load_device_db("explain", *config, code) : std::nullopt;
    if (!db) {
        return code;
    }
    auto remote = open_cli_remote("explain", *config, code);
    auto store = remote ? open_user_store("explain", code) : std::nullopt;
    auto devices = store ? probe_selected("explain", args.value("device"), code) : std::nullopt;
    if (!devices) {
        return code;
    }
    json out = json::array();
    for (const device_db::DeviceIdentity& id : *devices) {
        out.push_back(explain_device(*store, *db, id, *rendered, limit->value_or(kDefaultLimit),
                                     remote->get()));
        out.back()["canary"] = canary_verdict(*config, id, *variant);
        out.back()["erratum"] = covering_erratum(*config, id, *variant);
        if (!args.has("json")) {
            print_text(out.back());
        }
    }
    if (args.has("json")) {
        std::cout << out.dump(2) << "\n";
    }
    return 0;
}

}  // namespace

Command explain_command() {
    return {{"explain",
             "[options] VARIANT",
             "why a lookup misses: per-field diff against the nearest entries",
             "VARIANT is a kernel name or alias with optional parameters, as `kcache ls`\n"
             "prints them (dot, dot:dtype=f16, qconv2d_pointwise:out=i8). For each device\n"
             "(probed in a child) the key the runtime would look up is computed; on a miss\n"
             "the nearest stored entries are shown with every hashed field that differs\n"
             "(wanted vs stored): a new driver version, other build options, …\n"
             "With a remote tier (KCACHE_REMOTE), a HEAD request says whether the server\n"
             "holds the key.\n"
             "A fresh failure record for the key (timeout, crash, build error) is shown with\n"
             "its compiler log; `kcache gc --failures` clears the records.\n",
             {{"device", Arity::value, "SEL", "only this device: index or name substring"},
              {"limit", Arity::value, "N", "nearest entries shown per device (default 3)"},
              {"json", Arity::flag, "", "print JSON"}},
             1,
             1,
             std::string(kExitOk) + kExitUsage + "  3  unknown kernel, parameter or device\n" +
                 kExitStore + kExitEnvironment},
            run_explain};
}

}  // namespace kcache::cli
