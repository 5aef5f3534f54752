#include "kcache/device_db/database.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "kcache/device_db/loader.hpp"

namespace kcache::device_db {
namespace {

// Replaces the record with the same key or appends `record` (quirks keep data order).
void upsert_quirk(std::vector<QuirkRule>& quirks, QuirkRule rule) {
    auto it = std::find_if(quirks.begin(), quirks.end(),
                           [&](const QuirkRule& q) { return q.id == rule.id; });
    if (it != quirks.end()) {
        *it = std::move(rule);
    } else {
        quirks.push_back(std::move(rule));
    }
}

Diagnostic unknown_family(const Origin& origin, const std::string& what, const std::string& name) {
    return Diagnostic{DeviceDbErrc::unknown_reference, origin.file, origin.line,
                      what + " names unknown family \"" + name + "\""};
}

bool contains(const std::vector<std::string>& list, const std::string& s) {
    return std::find(list.begin(), list.end(), s) != list.end();
}

bool device_id_matches(const QuirkRule& rule, std::optional<std::uint32_t> pci_id) {
    if (rule.pci_ids.empty() && rule.pci_id_ranges.empty()) {
        return true;
    }
    if (!pci_id) {
        return false;
    }
    const bool listed =
        std::find(rule.pci_ids.begin(), rule.pci_ids.end(), *pci_id) != rule.pci_ids.end();
    return listed ||
           std::any_of(rule.pci_id_ranges.begin(), rule.pci_id_ranges.end(),
                       [&](const IdRange& r) { return r.first <= *pci_id && *pci_id <= r.last; });
}

bool family_matches(const QuirkRule& rule, const FamilyRecord* family) {
    if (!rule.families.empty() && (family == nullptr || !contains(rule.families, family->name))) {
        return false;
    }
    return rule.codenames.empty() ||
           (family != nullptr && contains(rule.codenames, family->codename));
}

bool driver_matches(const QuirkRule& rule, const std::string& driver_version) {
    if (!rule.driver) {
        return true;
    }
    // A driver whose version cannot be read is not assumed to be in any range.
    auto v = DriverVersion::parse_prefix(driver_version);
    return v && rule.driver->contains(*v);
}

bool platform_matches(const QuirkRule& rule, const DeviceIdentity& id) {
    return rule.platforms.empty() || contains(rule.platforms, id.platform_name);
}

// Each "NAME=value" holds in this process's environment now (an unset
// variable matches no value).
bool environment_matches(const QuirkRule& rule) {
    return std::all_of(rule.environment.begin(), rule.environment.end(), [](const std::string& e) {
        const auto eq = e.find('=');
        const char* v = std::getenv(e.substr(0, eq).c_str());
        return v != nullptr && e.compare(eq + 1, std::string::npos, v) == 0;
    });
}

}  // namespace

const char* to_string(MatchLevel level) {
    switch (level) {
        case MatchLevel::pci_id:
            return "pci_id";
        case MatchLevel::name:
            return "name";
        case MatchLevel::ip_version:
            return "ip_version";
        case MatchLevel::vendor:
            return "vendor";
        case MatchLevel::none:
            return "none";
    }
    return "none";
}

const char* to_string(QuirkAction action) {
    switch (action) {
        case QuirkAction::verify_before_use:
            return "verify_before_use";
        case QuirkAction::no_cached_binaries:
            return "no_cached_binaries";
        case QuirkAction::deny:
            return "deny";
        case QuirkAction::serialize_loads:
            return "serialize_loads";
    }
    return "unknown";
}

const char* to_string(GpuKind kind) {
    return kind == GpuKind::integrated ? "integrated" : "discrete";
}

Result<DeviceDb, DeviceDbError> DeviceDb::from_files(std::vector<DataFile> files) {
    DeviceDb db;
    for (DataFile& f : files) {
        if (auto s = db.merge(std::move(f)); !s) {
            return fail(s.error());  // the half-merged database is dropped
        }
    }
    return db;
}

Status<DeviceDbError> DeviceDb::add_layer(DataFile file) {
    DeviceDb next = *this;
    if (auto s = next.merge(std::move(file)); !s) {
        return s;
    }
    *this = std::move(next);
    return Ok{};
}

Status<DeviceDbError> DeviceDb::merge(DataFile file) {
    DeviceDb& next = *this;
    for (VendorRecord& v : file.vendors) {
        next.vendors_[v.id] = std::move(v);
    }
    for (FamilyRecord& f : file.families) {
        next.families_[f.name] = std::move(f);
    }
    std::set<std::string> codenames;
    for (const auto& [name, f] : next.families_) {
        codenames.insert(f.codename);
    }
    std::vector<Diagnostic> problems;
    for (DeviceRecord& d : file.devices) {
        const bool named = !d.name.empty();
        if (!next.families_.count(d.family)) {
            problems.push_back(unknown_family(
                d.origin, "device " + (named ? "\"" + d.name + "\"" : hex_id(d.pci_id)), d.family));
        }
        if (named) {
            next.named_devices_[{d.vendor_id, d.name}] = std::move(d);
        } else {
            next.devices_[{d.vendor_id, d.pci_id}] = std::move(d);
        }
    }
    for (QuirkRule& q : file.quirks) {
        for (const std::string& name : q.families) {
            if (!next.families_.count(name)) {
                problems.push_back(unknown_family(q.origin, "quirk \"" + q.id + "\"", name));
            }
        }
        for (const std::string& codename : q.codenames) {
            if (!codenames.count(codename)) {
                problems.push_back(
                    {DeviceDbErrc::unknown_reference, q.origin.file, q.origin.line,
                     "quirk \"" + q.id + "\" names unknown codename \"" + codename + "\""});
            }
        }
        upsert_quirk(next.quirks_, std::move(q));
    }
    if (!problems.empty()) {
        return fail(make_error(std::move(problems)));
    }
    return Ok{};
}

const VendorRecord* DeviceDb::vendor(std::uint32_t vendor_id) const {
    auto it = vendors_.find(vendor_id);
    return it == vendors_.end() ? nullptr : &it->second;
}

DeviceMatch DeviceDb::match(std::uint32_t vendor_id, std::uint32_t pci_id) const {
    DeviceMatch m;
    m.vendor = vendor(vendor_id);
    auto d = devices_.find({vendor_id, pci_id});
    if (d != devices_.end()) {
        m.level = MatchLevel::pci_id;
        m.device = &d->second;
        m.family = family(d->second.family);
    } else if (m.vendor != nullptr) {
        m.level = MatchLevel::vendor;
    }
    return m;
}

DeviceMatch DeviceDb::match(const DeviceIdentity& id) const {
    if (auto named = named_devices_.find({id.vendor_id, id.name}); named != named_devices_.end()) {
        return DeviceMatch{MatchLevel::name, &named->second, family(named->second.family),
                           vendor(id.vendor_id)};
    }
    if (id.type != DeviceType::gpu) {
        return DeviceMatch{};
    }
    if (id.pci_device_id) {
        DeviceMatch m = match(id.vendor_id, *id.pci_device_id);
        if (m.level == MatchLevel::pci_id) {
            return m;
        }
    }
    DeviceMatch m;
    m.vendor = vendor(id.vendor_id);
    m.level = m.vendor != nullptr ? MatchLevel::vendor : MatchLevel::none;
    if (id.ip_version && id.vendor_id == 0x8086) {
        // Exact IP first; a new stepping of a known major.minor still names its family.
        const IpVersion ip = IpVersion::decode(*id.ip_version);
        const FamilyRecord* near = nullptr;
        for (const auto& [name, f] : families_) {
            if (f.ip_version == ip) {
                m.family = &f;
                break;
            }
            if (near == nullptr && f.ip_version.major == ip.major &&
                f.ip_version.minor == ip.minor) {
                near = &f;
            }
        }
        m.family = m.family != nullptr ? m.family : near;
        m.level = m.family != nullptr ? MatchLevel::ip_version : m.level;
    }
    return m;
}

QuirkDecision DeviceDb::quirks_for(const DeviceIdentity& id) const {
    QuirkDecision out;
    const FamilyRecord* fam = match(id).family;
    for (const QuirkRule& rule : quirks_) {
        if ((rule.vendor_id && *rule.vendor_id != id.vendor_id) ||
            !device_id_matches(rule, id.pci_device_id) || !family_matches(rule, fam) ||
            !driver_matches(rule, id.driver_version) || !platform_matches(rule, id) ||
            !environment_matches(rule)) {
            continue;
        }
        out.rules.push_back(&rule);
        for (QuirkAction a : rule.actions) {
            out.verify_before_use |= a == QuirkAction::verify_before_use;
            out.no_cached_binaries |= a == QuirkAction::no_cached_binaries;
            out.deny |= a == QuirkAction::deny;
            out.serialize_loads |= a == QuirkAction::serialize_loads;
        }
        if (rule.jit_timeout_ms) {
            out.jit_timeout_ms = rule.jit_timeout_ms;  // later rules win
        }
    }
    return out;
}

const FamilyRecord* DeviceDb::family(const std::string& name) const {
    auto it = families_.find(name);
    return it == families_.end() ? nullptr : &it->second;
}

std::vector<const FamilyRecord*> DeviceDb::aot_families() const {
    std::vector<const FamilyRecord*> out;
    for (const auto& [name, f] : families_) {
        if (f.aot == AotList::listed) {
            out.push_back(&f);
        }
    }
    return out;
}

}  // namespace kcache::device_db
