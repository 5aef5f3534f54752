// Errata: what one covers, the document's JSON form (grammar in
// kcache/canary/errata.hpp), merging, and errata from the canary's verdicts.

#include "kcache/canary/errata.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "json_field.hpp"
#include "kcache/common/sha256.hpp"
#include "kcache/common/work.hpp"

namespace kcache::errata {
using canary::CanaryErrc;
using canary::CanaryError;
namespace {

using nlohmann::json;
using service::json_field;

constexpr int kErrataFormat = 1;
constexpr const char* kSuspect = "suspect";

// The runs of `v` that compare_versions orders by.
std::vector<std::string_view> version_runs(std::string_view v) {
    std::vector<std::string_view> runs;
    std::size_t i = 0;
    while (i < v.size()) {
        const char c = v[i];
        if (c == '.' || c == '-' || c == '+' || c == '_' || c == ' ') {
            ++i;
            continue;
        }
        const bool digits = std::isdigit(static_cast<unsigned char>(c)) != 0;
        std::size_t end = i;
        while (end < v.size() && std::isdigit(static_cast<unsigned char>(v[end])) == digits &&
               std::string_view(".-+_ ").find(v[end]) == std::string_view::npos) {
            ++end;
        }
        runs.push_back(v.substr(i, end - i));
        i = end;
    }
    return runs;
}

int compare_runs(std::string_view a, std::string_view b) {
    const bool numbers = std::isdigit(static_cast<unsigned char>(a[0])) != 0 &&
                         std::isdigit(static_cast<unsigned char>(b[0])) != 0;
    if (numbers) {
        a.remove_prefix(std::min(a.find_first_not_of('0'), a.size()));
        b.remove_prefix(std::min(b.find_first_not_of('0'), b.size()));
        if (a.size() != b.size()) {
            return a.size() < b.size() ? -1 : 1;
        }
    }
    const int c = a.compare(b);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

Erratum erratum_of(const json& j) {
    if (!j.is_object()) {
        throw std::runtime_error("not an object");
    }
    Erratum e;
    e.vendor_id = json_field<std::uint32_t>(j, "vendor_id");
    e.vendor = json_field<std::string>(j, "vendor");
    e.device_ids = json_field<std::vector<std::uint32_t>>(j, "device_ids");
    e.device = json_field<std::string>(j, "device");
    e.driver_min = json_field<std::string>(j, "driver_min");
    e.driver_max = json_field<std::string>(j, "driver_max");
    e.kernel = json_field<std::string>(j, "kernel");
    e.variant = json_field<std::string>(j, "variant");
    e.check = json_field<std::string>(j, "check");
    e.evidence = json_field<std::string>(j, "evidence");
    if (j.contains("source")) {
        e.source = json_field<std::string>(j, "source");
    }
    if (const auto verdict = json_field<std::string>(j, "verdict"); verdict != kSuspect) {
        throw std::runtime_error("verdict \"" + verdict + "\" is not \"suspect\"");
    }
    if (e.kernel.empty()) {
        throw std::runtime_error("field \"kernel\" is empty");
    }
    if (!e.variant.empty()) {
        auto v = kernels::parse_variant(e.variant);
        if (v && v->kernel != e.kernel) {
            throw std::runtime_error("variant \"" + e.variant + "\" is not one of kernel \"" +
                                     e.kernel + "\"");
        }
    }
    if (!e.driver_min.empty() && !e.driver_max.empty() &&
        compare_versions(e.driver_min, e.driver_max) > 0) {
        throw std::runtime_error("driver_min \"" + e.driver_min + "\" is above driver_max \"" +
                                 e.driver_max + "\"");
    }
    return e;
}

json erratum_json(const Erratum& e) {
    json j{{"vendor_id", e.vendor_id}, {"vendor", e.vendor},         {"device_ids", e.device_ids},
           {"device", e.device},       {"driver_min", e.driver_min}, {"driver_max", e.driver_max},
           {"kernel", e.kernel},       {"variant", e.variant},       {"verdict", kSuspect},
           {"check", e.check},         {"evidence", e.evidence}};
    if (!e.source.empty()) {
        j["source"] = e.source;
    }
    return j;
}

std::string hex_id(std::uint32_t id) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%04x", id);
    return buf;
}

}  // namespace

int compare_versions(std::string_view a, std::string_view b) {
    const auto ra = version_runs(a);
    const auto rb = version_runs(b);
    for (std::size_t i = 0; i < ra.size() && i < rb.size(); ++i) {
        if (const int c = compare_runs(ra[i], rb[i]); c != 0) {
            return c;
        }
    }
    return ra.size() == rb.size() ? 0 : (ra.size() < rb.size() ? -1 : 1);
}

std::string Erratum::id() const {
    json what{vendor_id, device_ids, device, driver_min, driver_max, kernel, variant};
    return sha256_hex(what.dump(-1, ' ', false, json::error_handler_t::replace)).substr(0, 16);
}

bool Erratum::covers(const canary::DriverIdentity& d) const {
    if (d.vendor_id != vendor_id || (!device.empty() && device != d.device)) {
        return false;
    }
    if (!device_ids.empty() &&
        std::find(device_ids.begin(), device_ids.end(), d.device_id) == device_ids.end()) {
        return false;
    }
    return (driver_min.empty() || compare_versions(driver_min, d.driver) <= 0) &&
           (driver_max.empty() || compare_versions(d.driver, driver_max) <= 0);
}

bool Erratum::covers(const canary::DriverIdentity& d, const kernels::Variant& v) const {
    return v.kernel == kernel && (variant.empty() || variant == v.id()) && covers(d);
}

std::string Erratum::describe() const {
    std::string ids;
    for (std::uint32_t id : device_ids) {
        ids += (ids.empty() ? "" : ",") + hex_id(id);
    }
    return (variant.empty() ? kernel : variant) + " on vendor " + hex_id(vendor_id) +
           (vendor.empty() ? "" : " (" + vendor + ")") + ", devices " +
           (ids.empty() ? "any" : ids) + (device.empty() ? "" : " named \"" + device + "\"") +
           ", drivers " + (driver_min.empty() ? "any" : driver_min) + ".." +
           (driver_max.empty() ? "any" : driver_max) + ": " + check + ": " + evidence;
}

std::string to_json(const std::vector<Erratum>& errata, const FeedStamp& stamp) {
    json list = json::array();
    for (const Erratum& e : errata) {
        list.push_back(erratum_json(e));
    }
    json doc{{"format", kErrataFormat}, {"errata", std::move(list)}};
    if (stamp.version) {
        doc["version"] = *stamp.version;
    }
    if (stamp.expires) {
        doc["expires"] = format_utc(*stamp.expires);
    }
    // A canary's evidence quotes a driver's text, which need not be UTF-8.
    return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<std::vector<Erratum>, CanaryError> from_json(std::string_view text) {
    json doc;
    work::add(work::Item::json_parsed);
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {
        return fail(CanaryError{CanaryErrc::damaged, "not JSON: " + std::string(e.what())});
    }
    if (!doc.is_object() || !doc.contains("format") || doc["format"] != kErrataFormat) {
        return fail(CanaryError{CanaryErrc::damaged,
                                "not an errata document of format 1 (its \"format\" field)"});
    }
    if (!doc.contains("errata") || !doc["errata"].is_array()) {
        return fail(CanaryError{CanaryErrc::damaged, "field \"errata\" is missing or not a list"});
    }
    std::vector<Erratum> out;
    for (std::size_t i = 0; i < doc["errata"].size(); ++i) {
        try {
            out.push_back(erratum_of(doc["errata"][i]));
        } catch (const std::exception& e) {
            return fail(
                CanaryError{CanaryErrc::damaged, "erratum " + std::to_string(i) + ": " + e.what()});
        }
    }
    return out;
}

std::size_t merge(std::vector<Erratum>& into, const std::vector<Erratum>& more) {
    std::size_t changed = 0;
    for (const Erratum& e : more) {
        const std::string id = e.id();
        auto same = std::find_if(into.begin(), into.end(),
                                 [&](const Erratum& have) { return have.id() == id; });
        if (same == into.end()) {
            into.push_back(e);
            ++changed;
        } else if (erratum_json(*same) != erratum_json(e)) {
            *same = e;
            ++changed;
        }
    }
    return changed;
}

const Erratum* covering(const std::vector<Erratum>& errata, const canary::DriverIdentity& driver,
                        const kernels::Variant& variant) {
    for (const Erratum& e : errata) {
        if (e.covers(driver, variant)) {
            return &e;
        }
    }
    return nullptr;
}

std::vector<Erratum> from_record(const canary::Record& record) {
    std::vector<Erratum> out;
    const canary::DriverIdentity& d = record.identity;
    for (const canary::Verdict& v : record.verdicts) {
        auto variant = kernels::parse_variant(v.variant);
        if (v.state != canary::VerdictState::suspect || !variant) {
            continue;
        }
        Erratum e{d.vendor_id,     d.vendor, {d.device_id}, d.device, d.driver, d.driver,
                  variant->kernel, "",       v.check,       "",       ""};
        e.evidence = "driver canary on " + d.describe() + ": " + v.variant + ": " + v.detail +
                     " (seed " + std::to_string(v.seed) + ")";
        const std::string id = e.id();
        if (std::none_of(out.begin(), out.end(), [&](const Erratum& o) { return o.id() == id; })) {
            out.push_back(std::move(e));
        }
    }
    return out;
}

}  // namespace kcache::errata
