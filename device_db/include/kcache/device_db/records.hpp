#pragma once
// The records of the device data files (schema: device_db/README.md).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kcache/device_db/ids.hpp"
#include "kcache/device_db/version.hpp"

namespace kcache::device_db {

enum class GpuKind { integrated, discrete };

// Whether the installed ocloc accepts a family's target name (checked by the DeviceDbOcloc.*
// tests).
enum class OclocSupport { supported, unsupported };

// Whether the install-time AOT prebuild covers a family ("the listed iGPUs").
enum class AotList { listed, not_listed };

// Where a record came from, for messages: "file:line".
struct Origin {
    std::string file;
    int line = 0;

    friend bool operator==(const Origin&, const Origin&) = default;
};

struct VendorRecord {
    std::uint32_t id = 0;
    std::string name;
    Origin origin;

    friend bool operator==(const VendorRecord&, const VendorRecord&) = default;
};

// A GPU family: one ocloc target, one IP version.
struct FamilyRecord {
    std::string name;          // "tgllp"; unique key
    std::string codename;      // "Tiger Lake"
    std::string generation;    // "Gen12"
    std::string architecture;  // "xe-lp"
    IpVersion ip_version;
    std::string ocloc_target;  // the -device name
    OclocSupport ocloc = OclocSupport::supported;
    GpuKind kind = GpuKind::integrated;
    AotList aot = AotList::not_listed;
    // Devices no ahead-of-time compiler here targets: their stores and packs
    // should carry SPIR-V (kcache prebuild --il), which a driver that loads
    // IL builds without the OpenCL C front end.
    bool prefer_il = false;
    std::string notes;
    Origin origin;

    friend bool operator==(const FamilyRecord&, const FamilyRecord&) = default;
};

// A device known by PCI id, or, for devices whose driver reports none (CPU
// runtimes such as PoCL, drivers without PCI queries), by its exact OpenCL
// device name; exactly one of the two is set.
struct DeviceRecord {
    std::uint32_t vendor_id = 0x8086;
    std::uint32_t pci_id = 0;  // 0 for a record matched by name
    std::string name;          // CL_DEVICE_NAME for a record matched by name, else empty
    std::string product;       // marketing name
    std::string family;        // FamilyRecord::name
    Origin origin;

    friend bool operator==(const DeviceRecord&, const DeviceRecord&) = default;
};

// What a matching quirk rule asks for.
// serialize_loads: kcache makes at most one program from a binary at a time
// in the process for such a device (a driver that does not survive
// concurrent loads, which its own source builds never did).
enum class QuirkAction { verify_before_use, no_cached_binaries, deny, serialize_loads };

struct IdRange {
    std::uint32_t first = 0;
    std::uint32_t last = 0;  // inclusive

    friend bool operator==(const IdRange&, const IdRange&) = default;
};

struct QuirkRule {
    std::string id;  // unique key
    // Match: every present criterion must hold; lists match when any entry does.
    std::optional<std::uint32_t> vendor_id;
    std::vector<std::uint32_t> pci_ids;
    std::vector<IdRange> pci_id_ranges;
    std::vector<std::string> families;
    std::vector<std::string> codenames;
    std::optional<VersionRange> driver;    // inclusive bounds
    std::vector<std::string> platforms;    // CL_PLATFORM_NAME, exactly
    std::vector<std::string> environment;  // "NAME=value", each set so in the process
    // Actions.
    std::vector<QuirkAction> actions;
    std::optional<std::uint32_t> jit_timeout_ms;
    std::string notes;
    Origin origin;

    friend bool operator==(const QuirkRule&, const QuirkRule&) = default;
};

// Everything one data file holds, in file order.
struct DataFile {
    std::string file;
    std::vector<VendorRecord> vendors;
    std::vector<FamilyRecord> families;
    std::vector<DeviceRecord> devices;
    std::vector<QuirkRule> quirks;

    friend bool operator==(const DataFile&, const DataFile&) = default;
};

const char* to_string(QuirkAction action);
const char* to_string(GpuKind kind);

}  // namespace kcache::device_db
