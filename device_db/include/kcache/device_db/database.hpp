#pragma once
// DeviceDb: the device records and quirk rules of the built-in data plus optional
// override layers, and the lookups callers use (match, quirks_for).

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/device_db/error.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/device_db/records.hpp"

namespace kcache::device_db {

// How specific a match is, most specific first (CLBlast-style fallback).
enum class MatchLevel { pci_id, name, ip_version, vendor, none };

const char* to_string(MatchLevel level);

// The answer of DeviceDb::match. Pointers stay valid while the DeviceDb lives.
struct DeviceMatch {
    MatchLevel level = MatchLevel::none;
    const DeviceRecord* device = nullptr;  // set for MatchLevel::pci_id and name
    const FamilyRecord* family = nullptr;  // set for pci_id, name and ip_version
    const VendorRecord* vendor = nullptr;  // set when the vendor is known
};

// Every action of the rules that matched, merged.
struct QuirkDecision {
    std::vector<const QuirkRule*> rules;
    bool verify_before_use = false;
    bool no_cached_binaries = false;
    bool deny = false;
    bool serialize_loads = false;
    std::optional<std::uint32_t> jit_timeout_ms;  // the last matching rule's, if any

    bool any() const { return !rules.empty(); }
};

// Immutable once built: the const lookups are safe from any number of threads.
class DeviceDb {
  public:
    // The built-in data only; an error means the shipped data is broken.
    static Result<DeviceDb, DeviceDbError> builtin();
    // The built-in data with `override_file` layered on top; an empty path
    // layers nothing (the caller's configuration names the file: this layer
    // reads no environment).
    static Result<DeviceDb, DeviceDbError> with_override(
        const std::filesystem::path& override_file);
    // Layers `files` in order over an empty database.
    static Result<DeviceDb, DeviceDbError> from_files(std::vector<DataFile> files);

    // Adds `file` on top: a record with the key of an earlier one (vendor id, family
    // name, vendor+PCI id, quirk id) replaces it. Fails with DeviceDbErrc::unknown_reference
    // ("file:line: ...") when a device or quirk names a family no layer defines; the
    // database is unchanged then.
    Status<DeviceDbError> add_layer(DataFile file);

    // Record for an Intel-style PCI id: exact device, else vendor, else none.
    DeviceMatch match(std::uint32_t vendor_id, std::uint32_t pci_id) const;
    // Record for a probed device: a record naming the device (vendor + exact
    // CL_DEVICE_NAME, any device type) first; then GPUs by PCI id, by IP version,
    // by vendor; other non-GPU devices (e.g. PoCL's CPU device) get MatchLevel::none.
    DeviceMatch match(const DeviceIdentity& identity) const;

    // Every quirk rule that applies to `identity`, in data order, merged.
    QuirkDecision quirks_for(const DeviceIdentity& identity) const;

    // The family named `name`, or nullptr.
    const FamilyRecord* family(const std::string& name) const;
    // The vendor with PCI vendor id `vendor_id`, or nullptr.
    const VendorRecord* vendor(std::uint32_t vendor_id) const;
    const std::map<std::string, FamilyRecord>& families() const { return families_; }
    const std::vector<QuirkRule>& quirks() const { return quirks_; }
    // Families on the default AOT list, in name order.
    std::vector<const FamilyRecord*> aot_families() const;
    std::size_t device_count() const { return devices_.size() + named_devices_.size(); }

  private:
    // add_layer's work on this database itself: on failure it is left half
    // merged, so add_layer merges into a copy and from_files drops it.
    Status<DeviceDbError> merge(DataFile file);

    std::map<std::uint32_t, VendorRecord> vendors_;
    std::map<std::string, FamilyRecord> families_;
    std::map<std::pair<std::uint32_t, std::uint32_t>, DeviceRecord> devices_;
    std::map<std::pair<std::uint32_t, std::string>, DeviceRecord> named_devices_;
    std::vector<QuirkRule> quirks_;
};

}  // namespace kcache::device_db
