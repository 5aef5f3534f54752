#include "quirk_loader.hpp"

namespace kcache::device_db::detail {
namespace {

using nlohmann::json;

std::optional<QuirkAction> parse_action(const std::string& text) {
    if (text == "verify_before_use") {
        return QuirkAction::verify_before_use;
    }
    if (text == "no_cached_binaries") {
        return QuirkAction::no_cached_binaries;
    }
    if (text == "deny") {
        return QuirkAction::deny;
    }
    if (text == "serialize_loads") {
        return QuirkAction::serialize_loads;
    }
    return std::nullopt;
}

// Reads "pci_id_ranges"; false after a problem.
bool read_ranges(const LocatedJson& doc, FieldReader& match, QuirkRule& rule) {
    const json* list = match.array("pci_id_ranges", Need::optional);
    if (list == nullptr) {
        return !match.has("pci_id_ranges");
    }
    bool ok = true;
    for (std::size_t i = 0; i < list->size(); ++i) {
        const std::string pointer = child_pointer(match.member_pointer("pci_id_ranges"), i);
        if (!(*list)[i].is_object()) {
            match.problems().add(DeviceDbErrc::wrong_type, doc.line_of(pointer),
                                 "each pci_id_ranges entry must be an object");
            ok = false;
            continue;
        }
        FieldReader r(doc, (*list)[i], pointer, "pci_id range", match.problems());
        r.allow_only({"first", "last"});
        auto first = r.hex("first", Need::required);
        auto last = r.hex("last", Need::required);
        if (first && last && *first > *last) {
            r.problems().add(
                DeviceDbErrc::bad_range, r.line(),
                "empty pci_id range: first " + hex_id(*first) + " > last " + hex_id(*last));
            ok = false;
        } else if (first && last) {
            rule.pci_id_ranges.push_back(IdRange{*first, *last});
        } else {
            ok = false;
        }
    }
    return ok;
}

// Reads "driver"; false after a problem.
bool read_driver(const LocatedJson& doc, FieldReader& match, QuirkRule& rule) {
    const json* driver = match.object("driver", Need::optional);
    if (driver == nullptr) {
        return !match.has("driver");
    }
    FieldReader r(doc, *driver, match.member_pointer("driver"), "driver range", match.problems());
    r.allow_only({"min", "max"});
    VersionRange range{r.version("min", Need::optional), r.version("max", Need::optional)};
    if ((r.has("min") && !range.min) || (r.has("max") && !range.max)) {
        return false;
    }
    if (!range.min && !range.max) {
        r.problems().add(DeviceDbErrc::bad_range, r.line(),
                         "driver range needs \"min\" or \"max\"");
        return false;
    }
    if (range.min && range.max && *range.max < *range.min) {
        r.problems().add(DeviceDbErrc::bad_range, r.line(),
                         "empty driver range: min " + range.min->to_string() + " > max " +
                             range.max->to_string());
        return false;
    }
    rule.driver = range;
    return true;
}

// Reads the "match" object; false after a problem.
bool read_match(const LocatedJson& doc, FieldReader& quirk, QuirkRule& rule) {
    const json* m = quirk.object("match", Need::required);
    if (m == nullptr) {
        return false;
    }
    FieldReader r(doc, *m, quirk.member_pointer("match"), "quirk match", quirk.problems());
    r.allow_only({"vendor", "pci_ids", "pci_id_ranges", "families", "codenames", "driver",
                  "platforms", "environment"});
    if (m->empty()) {
        r.problems().add(DeviceDbErrc::bad_value, r.line(), "quirk match has no criterion");
        return false;
    }
    rule.vendor_id = r.hex("vendor", Need::optional);
    auto ids = r.hex_list("pci_ids", Need::optional);
    auto families = r.strings("families", Need::optional);
    auto codenames = r.strings("codenames", Need::optional);
    auto platforms = r.strings("platforms", Need::optional);
    auto environment = r.strings("environment", Need::optional);
    bool ok = read_ranges(doc, r, rule) && read_driver(doc, r, rule);
    ok = ok && (!r.has("vendor") || rule.vendor_id) && (!r.has("pci_ids") || ids) &&
         (!r.has("families") || families) && (!r.has("codenames") || codenames) &&
         (!r.has("platforms") || platforms) && (!r.has("environment") || environment);
    for (const std::string& e : environment.value_or(std::vector<std::string>{})) {
        if (e.find('=') == std::string::npos || e.front() == '=') {
            r.problems().add(DeviceDbErrc::bad_value, r.line_of("environment"),
                             "environment entry \"" + e + "\" is not NAME=value");
            ok = false;
        }
    }
    rule.platforms = platforms.value_or(std::vector<std::string>{});
    rule.environment = environment.value_or(std::vector<std::string>{});
    rule.pci_ids = ids.value_or(std::vector<std::uint32_t>{});
    rule.families = families.value_or(std::vector<std::string>{});
    rule.codenames = codenames.value_or(std::vector<std::string>{});
    return ok;
}

// Reads "actions" and "jit_timeout_ms"; false after a problem.
bool read_actions(const LocatedJson& doc, FieldReader& r, QuirkRule& rule) {
    auto actions = r.strings("actions", Need::optional);
    auto timeout = r.unsigned_number("jit_timeout_ms", Need::optional);
    bool ok = (!r.has("actions") || actions) && (!r.has("jit_timeout_ms") || timeout);
    for (std::size_t i = 0; actions && i < actions->size(); ++i) {
        auto action = parse_action((*actions)[i]);
        if (!action) {
            r.problems().add(DeviceDbErrc::bad_value,
                             doc.line_of(child_pointer(r.member_pointer("actions"), i)),
                             "unknown quirk action \"" + (*actions)[i] +
                                 "\" (verify_before_use, no_cached_binaries, deny or "
                                 "serialize_loads)");
            ok = false;
            continue;
        }
        rule.actions.push_back(*action);
    }
    if (timeout && (*timeout == 0 || *timeout > 0xffffffffu)) {
        r.problems().add(DeviceDbErrc::bad_value, r.line_of("jit_timeout_ms"),
                         "jit_timeout_ms must be between 1 and 4294967295");
        return false;
    }
    if (timeout) {
        rule.jit_timeout_ms = static_cast<std::uint32_t>(*timeout);
    }
    if (ok && rule.actions.empty() && !rule.jit_timeout_ms) {
        r.problems().add(DeviceDbErrc::bad_value, r.line(),
                         "quirk has neither \"actions\" nor \"jit_timeout_ms\"");
        return false;
    }
    return ok;
}

}  // namespace

std::optional<QuirkRule> read_quirk(const LocatedJson& doc, FieldReader& r,
                                    const std::string& file) {
    r.allow_only({"id", "match", "actions", "jit_timeout_ms", "notes"});
    QuirkRule rule;
    auto id = r.string("id", Need::required);
    auto notes = r.string("notes", Need::optional);
    const bool match_ok = read_match(doc, r, rule);
    const bool actions_ok = read_actions(doc, r, rule);
    if (!id || !match_ok || !actions_ok || (r.has("notes") && !notes)) {
        return std::nullopt;
    }
    rule.id = *id;
    rule.notes = notes.value_or("");
    rule.origin = Origin{file, r.line()};
    return rule;
}

}  // namespace kcache::device_db::detail
