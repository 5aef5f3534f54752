#include "entries.hpp"

#include "cli.hpp"
#include "kcache/store/pack.hpp"

namespace kcache::cli {

using nlohmann::json;

json fields_to_json(const store::KeyFields& f) {
    return {{"key_version", f.key_version},
            {"kernel_name", f.kernel_name},
            {"source_digest", f.source_digest},
            {"entry_points", f.entry_points},
            {"build_options", f.build_options},
            {"target_format", f.target_format},
            {"vendor_id", f.vendor_id},
            {"device_name", f.device_name},
            {"pci_device_id", f.pci_device_id},
            {"ip_version", f.ip_version},
            {"driver_version", f.driver_version},
            {"platform_name", f.platform_name},
            {"platform_version", f.platform_version},
            {"opencl_c_version", f.opencl_c_version},
            {"address_bits", f.address_bits},
            {"device_uuid", f.device_uuid},
            {"driver_uuid", f.driver_uuid},
            {"compiler_id", f.compiler_id}};
}

json entry_to_json(const store::EntryInfo& e) {
    return {{"key", e.key.hex()},
            {"kernel", e.fields.kernel_name},
            {"device", entry_device(e.fields)},
            {"fields", fields_to_json(e.fields)},
            {"origin", origin_name(e.provenance.origin)},
            {"producer", e.provenance.producer_version},
            {"build_time_ms", e.provenance.build_time_ms},
            {"raw_size", e.raw_size},
            {"stored_size", e.stored_size},
            {"created", format_time(e.created_ms)},
            {"last_use", format_time(e.last_use_ms)},
            {"hit_count", e.hit_count},
            {"verification", verification_name(e.verification)},
            {"verified_at", format_time(e.verified_at_ms)}};
}

json failure_to_json(const store::FailureRecord& r, store::TimeMs now_ms) {
    return {{"key", r.key.hex()},
            {"kind", store::to_string(r.kind)},
            {"count", r.count},
            {"budget_ms", r.budget_ms},
            {"first_seen", format_time(r.first_seen_ms)},
            {"last_seen", format_time(r.last_seen_ms)},
            {"expires", format_time(r.expires_ms)},
            {"expired", r.expires_ms <= now_ms},
            {"detail", r.detail}};
}

std::optional<std::vector<store::EntryInfo>> list_entries(std::string_view command,
                                                          const std::optional<std::string>& pack,
                                                          int& exit_code) {
    if (pack) {
        auto opened = open_named_pack(command, *pack, exit_code);
        if (!opened) {
            return std::nullopt;
        }
        auto listed = opened->list();
        if (!listed) {
            exit_code = report(Exit::store_error, command, listed.error().message);
            return std::nullopt;
        }
        return std::move(listed).value();
    }
    auto store = open_user_store(command, exit_code);
    if (!store) {
        return std::nullopt;
    }
    auto listed = store->list();
    if (!listed) {
        exit_code = report(exit_for(listed.error()), command, listed.error().message);
        return std::nullopt;
    }
    return std::move(listed).value();
}

std::optional<store::Key> resolve_key(store::Store& store, const std::string& text,
                                      std::string_view command, int& exit_code) {
    const bool hex = text.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!hex || text.size() < 8 || text.size() > 64) {
        exit_code = report(Exit::usage, command,
                           "'" + text + "' is not a key (8 to 64 lower-case hex digits)");
        return std::nullopt;
    }
    auto listed = store.list();
    if (!listed) {
        exit_code = report(exit_for(listed.error()), command, listed.error().message);
        return std::nullopt;
    }
    std::optional<store::Key> found;
    for (const store::EntryInfo& e : *listed) {
        if (e.key.hex().rfind(text, 0) != 0) {
            continue;
        }
        if (found) {
            exit_code = report(Exit::usage, command, "key prefix '" + text + "' is ambiguous");
            return std::nullopt;
        }
        found = e.key;
    }
    if (!found) {
        exit_code = report(Exit::not_found, command, "no entry with key " + text);
    }
    return found;
}

}  // namespace kcache::cli
