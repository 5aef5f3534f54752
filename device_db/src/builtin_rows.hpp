#pragma once
// The rows the generated builtin_records.cpp holds the device data in
// (device_db/generator/compile_data.cpp writes them): constant tables of
// plain values, turned into the records of a DataFile by one short loop per
// kind, so that building the built-in data runs little code (a process's
// first cache hit builds it).

#include <span>

#include "kcache/device_db/records.hpp"

namespace kcache::device_db::rows {

struct Vendor {
    std::uint32_t id;
    const char* name;
    int line;
};

struct Family {
    const char* name;
    const char* codename;
    const char* generation;
    const char* architecture;
    IpVersion ip_version;
    const char* ocloc_target;
    OclocSupport ocloc;
    GpuKind kind;
    AotList aot;
    bool prefer_il;
    const char* notes;
    int line;
};

struct Device {
    std::uint32_t vendor_id;
    std::uint32_t pci_id;
    const char* name;
    const char* product;
    const char* family;
    int line;
};

// Appends the records of `vendors`, `families` and `devices` to `f` (their
// origin: `f.file` and each row's line).
inline void append(DataFile& f, std::span<const Vendor> vendors, std::span<const Family> families,
                   std::span<const Device> devices) {
    f.vendors.reserve(f.vendors.size() + vendors.size());
    for (const Vendor& v : vendors) {
        f.vendors.push_back({v.id, v.name, Origin{f.file, v.line}});
    }
    f.families.reserve(f.families.size() + families.size());
    for (const Family& r : families) {
        f.families.push_back({r.name, r.codename, r.generation, r.architecture, r.ip_version,
                              r.ocloc_target, r.ocloc, r.kind, r.aot, r.prefer_il, r.notes,
                              Origin{f.file, r.line}});
    }
    f.devices.reserve(f.devices.size() + devices.size());
    for (const Device& d : devices) {
        f.devices.push_back(
            {d.vendor_id, d.pci_id, d.name, d.product, d.family, Origin{f.file, d.line}});
    }
}

}  // namespace kcache::device_db::rows
