// Schema of a data file (full description: device_db/README.md):
//   file    := { "schema": 1, ["notes": str], ["vendors": [vendor]], ["families": [family]],
//                ["devices": [device]], ["quirks": [quirk]] }
//   vendor  := { "id": hex, "name": str }
//   family  := { "name", "codename", "generation", "architecture": str, "ip_version": "M.m.r",
//                "ocloc_target": str, "ocloc": "supported"|"unsupported",
//                "kind": "integrated"|"discrete", "aot_default": bool, ["notes": str] }
//   device  := { "pci_id": hex | "name": str, ["vendor": hex], "product": str, "family": str }
//   quirk   := see quirk_loader.cpp
// Keys are checked against these lists; ids must be unique within one file.
#include "kcache/device_db/loader.hpp"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "field_reader.hpp"
#include "kcache/common/read_file.hpp"
#include "located_json.hpp"
#include "quirk_loader.hpp"

namespace kcache::device_db {
namespace detail {
namespace {

using nlohmann::json;

constexpr std::uint64_t kSchemaVersion = 1;

// Calls `read(reader)` for each element of the array `section`, which must hold objects.
template <class ReadOne>
void for_each_object(const LocatedJson& doc, FieldReader& top, std::string_view section,
                     const char* what, ReadOne read) {
    const json* list = top.array(section, Need::optional);
    if (list == nullptr) {
        return;
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
        const std::string pointer = child_pointer(top.member_pointer(section), i);
        if (!(*list)[i].is_object()) {
            top.problems().add(
                DeviceDbErrc::wrong_type, doc.line_of(pointer),
                std::string("each entry of \"") + std::string(section) + "\" must be an object");
            continue;
        }
        FieldReader reader(doc, (*list)[i], pointer, what, top.problems());
        read(reader);
    }
}

// Reports a key seen before in this file; returns false then.
template <class Key>
bool first_time(std::map<Key, int>& seen, const Key& key, const std::string& label, int line,
                Problems& problems) {
    auto [it, inserted] = seen.emplace(key, line);
    if (!inserted) {
        problems.add(DeviceDbErrc::duplicate, line,
                     "duplicate " + label + " (first at line " + std::to_string(it->second) + ")");
    }
    return inserted;
}

void read_vendors(const LocatedJson& doc, FieldReader& top, DataFile& out) {
    std::map<std::uint32_t, int> seen;
    for_each_object(doc, top, "vendors", "vendor", [&](FieldReader& r) {
        r.allow_only({"id", "name"});
        auto id = r.hex("id", Need::required);
        auto name = r.string("name", Need::required);
        if (id && name &&
            first_time(seen, *id, "vendor id " + hex_id(*id), r.line(), r.problems())) {
            out.vendors.push_back(VendorRecord{*id, *name, Origin{out.file, r.line()}});
        }
    });
}

std::optional<IpVersion> read_ip_version(FieldReader& r) {
    auto text = r.string("ip_version", Need::required);
    if (!text) {
        return std::nullopt;
    }
    auto ip = IpVersion::parse(*text);
    if (!ip) {
        r.problems().add(DeviceDbErrc::bad_version, r.line_of("ip_version"),
                         "malformed ip_version \"" + *text + "\" (expected major.minor.revision)");
    }
    return ip;
}

void read_families(const LocatedJson& doc, FieldReader& top, DataFile& out) {
    std::map<std::string, int> seen;
    for_each_object(doc, top, "families", "family", [&](FieldReader& r) {
        r.allow_only({"name", "codename", "generation", "architecture", "ip_version",
                      "ocloc_target", "ocloc", "kind", "aot_default", "prefer_il", "notes"});
        FamilyRecord f;
        auto name = r.string("name", Need::required);
        auto codename = r.string("codename", Need::required);
        auto generation = r.string("generation", Need::required);
        auto arch = r.string("architecture", Need::required);
        auto ip = read_ip_version(r);
        auto target = r.string("ocloc_target", Need::required);
        auto ocloc = r.one_of("ocloc", Need::required, {"supported", "unsupported"});
        auto kind = r.one_of("kind", Need::required, {"integrated", "discrete"});
        auto aot = r.boolean("aot_default", Need::required);
        auto il = r.boolean("prefer_il", Need::optional);
        auto notes = r.string("notes", Need::optional);
        if (!(name && codename && generation && arch && ip && target && ocloc && kind && aot) ||
            !first_time(seen, *name, "family \"" + *name + "\"", r.line(), r.problems())) {
            return;
        }
        out.families.push_back(FamilyRecord{
            *name, *codename, *generation, *arch, *ip, *target,
            *ocloc == "supported" ? OclocSupport::supported : OclocSupport::unsupported,
            *kind == "integrated" ? GpuKind::integrated : GpuKind::discrete,
            *aot ? AotList::listed : AotList::not_listed, il.value_or(false), notes.value_or(""),
            Origin{out.file, r.line()}});
    });
}

void read_devices(const LocatedJson& doc, FieldReader& top, DataFile& out) {
    std::map<std::pair<std::uint32_t, std::uint32_t>, int> seen;
    std::map<std::pair<std::uint32_t, std::string>, int> seen_names;
    for_each_object(doc, top, "devices", "device", [&](FieldReader& r) {
        r.allow_only({"pci_id", "name", "vendor", "product", "family"});
        const bool by_name = r.has("name");
        if (by_name == r.has("pci_id")) {
            r.problems().add(DeviceDbErrc::bad_value, r.line(),
                             "a device needs exactly one of \"pci_id\" and \"name\"");
            return;
        }
        auto pci_id = r.hex("pci_id", by_name ? Need::optional : Need::required);
        auto name = r.string("name", by_name ? Need::required : Need::optional);
        auto vendor = r.hex("vendor", Need::optional);
        auto product = r.string("product", Need::required);
        auto family = r.string("family", Need::required);
        if (!((pci_id || name) && product && family) || (r.has("vendor") && !vendor)) {
            return;
        }
        if (name && name->empty()) {
            r.problems().add(DeviceDbErrc::bad_value, r.line(),
                             "a device \"name\" must not be empty");
            return;
        }
        const std::uint32_t vendor_id = vendor.value_or(0x8086);
        const bool first = by_name
                               ? first_time(seen_names, std::pair(vendor_id, *name),
                                            "device name \"" + *name + "\"", r.line(), r.problems())
                               : first_time(seen, std::pair(vendor_id, *pci_id),
                                            "pci_id " + hex_id(*pci_id), r.line(), r.problems());
        if (first) {
            out.devices.push_back(DeviceRecord{vendor_id, pci_id.value_or(0), name.value_or(""),
                                               *product, *family, Origin{out.file, r.line()}});
        }
    });
}

void read_top(const LocatedJson& doc, Problems& problems, DataFile& out) {
    if (!doc.root.is_object()) {
        problems.add(DeviceDbErrc::wrong_type, 1, "a data file must be a JSON object");
        return;
    }
    FieldReader top(doc, doc.root, "", "data file", problems);
    top.allow_only({"schema", "notes", "vendors", "families", "devices", "quirks"});
    top.string("notes", Need::optional);
    auto schema = top.unsigned_number("schema", Need::required);
    if (schema && *schema != kSchemaVersion) {
        problems.add(DeviceDbErrc::bad_value, top.line_of("schema"),
                     "unsupported schema " + std::to_string(*schema) + " (this kcache reads " +
                         std::to_string(kSchemaVersion) + ")");
        return;
    }
    read_vendors(doc, top, out);
    read_families(doc, top, out);
    read_devices(doc, top, out);
    std::map<std::string, int> seen_quirks;
    for_each_object(doc, top, "quirks", "quirk", [&](FieldReader& r) {
        auto rule = read_quirk(doc, r, out.file);
        if (rule && first_time(seen_quirks, rule->id, "quirk id \"" + rule->id + "\"", r.line(),
                               problems)) {
            out.quirks.push_back(std::move(*rule));
        }
    });
}

}  // namespace
}  // namespace detail

Result<DataFile, DeviceDbError> parse_data_file(std::string_view text, std::string_view file_name) {
    DataFile out;
    out.file = std::string(file_name);
    auto doc = detail::parse_located_json(text, out.file);
    if (!doc) {
        return fail(make_error(doc.error()));
    }
    detail::Problems problems{out.file, {}};
    detail::read_top(*doc, problems, out);
    if (!problems.list.empty()) {
        return fail(make_error(std::move(problems.list)));
    }
    return out;
}

Result<DataFile, DeviceDbError> read_data_file(const std::filesystem::path& path) {
    // A device data file is a few kilobytes; 16 MiB bounds a hostile one.
    auto text = read_regular_file(path, 16u << 20);
    if (!text) {
        return fail(DeviceDbError{
            DeviceDbErrc::io, "cannot read device data file " + text.error().message, {}});
    }
    return parse_data_file(*text, path.string());
}

}  // namespace kcache::device_db
