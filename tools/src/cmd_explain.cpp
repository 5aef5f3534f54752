// kcache explain: why a lookup misses. Computes the key the runtime would
// use for a kernel variant on a device (the service's jit_key_fields) and
// diffs it field by field against the nearest stored entries.

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "entries.hpp"
#include "kcache/cache/keys.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/kernels/registry.hpp"
#include "opencl_devices.hpp"

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

json explain_device(store::Store& store, const device_db::DeviceDb& db,
                    const device_db::DeviceIdentity& id, const kernels::Rendered& r,
                    std::size_t limit) {
    const service::CompileInput input{r.variant.id(), r.source, r.options, r.entry_points};
    const store::KeyFields fields = service::jit_key_fields(id, input);
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
    if (d["state"] == "hit") {
        return;
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

int run(const ParsedArgs& args) {
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
    auto db = device_db::DeviceDb::from_environment();
    if (!rendered || !db) {
        return report(Exit::store_error, "explain",
                      !rendered ? rendered.error().message : db.error().message);
    }
    int code = 0;
    auto store = open_user_store("explain", code);
    auto devices = store ? probe_selected("explain", args.value("device"), code) : std::nullopt;
    if (!devices) {
        return code;
    }
    json out = json::array();
    for (const device_db::DeviceIdentity& id : *devices) {
        out.push_back(explain_device(*store, *db, id, *rendered, limit->value_or(kDefaultLimit)));
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
             "(wanted vs stored): a new driver version, other build options, …\n",
             {{"device", Arity::value, "SEL", "only this device: index or name substring"},
              {"limit", Arity::value, "N", "nearest entries shown per device (default 3)"},
              {"json", Arity::flag, "", "print JSON"}},
             1,
             1,
             std::string(kExitOk) + kExitUsage + "  3  unknown kernel, parameter or device\n" +
                 kExitStore + kExitEnvironment},
            run};
}

}  // namespace kcache::cli
