#include "entry_row.hpp"

#include <sstream>

namespace kcache::store::rows {

// Keep the order in sync with read_info() and bind_entry().
#define KCACHE_INFO_COLUMNS                                                                     \
    "e.key, e.key_version, e.kernel_name, e.source_digest, e.entry_points, e.build_options, "   \
    "e.target_format, e.vendor_id, e.device_name, e.pci_device_id, e.ip_version, "              \
    "e.driver_version, e.platform_name, e.platform_version, e.opencl_c_version, "               \
    "e.address_bits, e.device_uuid, e.driver_uuid, e.compiler_id, e.codec, e.raw_size, "        \
    "e.stored_size, e.producer_version, e.origin, e.build_time_ms, e.build_log, e.created_ms, " \
    "e.last_use_ms, e.hit_count, e.verification, e.verified_at_ms, e.id"

const char* const kSelectInfoByKey =
    "SELECT " KCACHE_INFO_COLUMNS " FROM entries e WHERE e.key = ?";
const char* const kSelectEntryByKey = "SELECT " KCACHE_INFO_COLUMNS
                                      ", e.checksum, b.data FROM entries e "
                                      "JOIN blobs b ON b.id = e.id WHERE e.key = ?";
const char* const kSelectAllInfo =
    "SELECT " KCACHE_INFO_COLUMNS " FROM entries e ORDER BY e.last_use_ms, e.id";
const char* const kSelectAllEntries = "SELECT " KCACHE_INFO_COLUMNS
                                      ", e.checksum, b.data FROM entries e "
                                      "JOIN blobs b ON b.id = e.id ORDER BY e.id";
const char* const kInsertEntry =
    "INSERT INTO entries(key, key_version, kernel_name, source_digest, entry_points, "
    "build_options, target_format, vendor_id, device_name, pci_device_id, ip_version, "
    "driver_version, platform_name, platform_version, opencl_c_version, address_bits, "
    "device_uuid, driver_uuid, compiler_id, codec, raw_size, stored_size, producer_version, "
    "origin, build_time_ms, build_log, created_ms, last_use_ms, hit_count, verification, "
    "verified_at_ms, checksum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO NOTHING RETURNING id";
const char* const kInsertBlob = "INSERT INTO blobs(id, data) VALUES (?, ?)";
const char* const kDeleteEntryByKey = "DELETE FROM entries WHERE key = ?";

#undef KCACHE_INFO_COLUMNS

std::string join_entry_points(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) {
        if (!out.empty()) {
            out.push_back(' ');
        }
        out += n;
    }
    return out;
}

std::vector<std::string> split_entry_points(std::string_view column) {
    std::vector<std::string> out;
    std::istringstream in{std::string(column)};
    std::string name;
    while (in >> name) {
        out.push_back(name);
    }
    return out;
}

EntryInfo read_info(const sql::Stmt& s) {
    EntryInfo e;
    int c = 0;
    (void)e.key.parse_hex(s.text(c++));
    KeyFields& f = e.fields;
    f.key_version = static_cast<std::uint32_t>(s.int64(c++));
    f.kernel_name = s.text(c++);
    f.source_digest = s.text(c++);
    f.entry_points = split_entry_points(s.text(c++));
    f.build_options = s.text(c++);
    f.target_format = s.text(c++);
    f.vendor_id = static_cast<std::uint32_t>(s.int64(c++));
    f.device_name = s.text(c++);
    f.pci_device_id = static_cast<std::uint32_t>(s.int64(c++));
    f.ip_version = static_cast<std::uint32_t>(s.int64(c++));
    f.driver_version = s.text(c++);
    f.platform_name = s.text(c++);
    f.platform_version = s.text(c++);
    f.opencl_c_version = s.text(c++);
    f.address_bits = static_cast<std::uint32_t>(s.int64(c++));
    f.device_uuid = s.text(c++);
    f.driver_uuid = s.text(c++);
    f.compiler_id = s.text(c++);
    e.codec = static_cast<Codec>(s.int64(c++));
    e.raw_size = static_cast<std::uint64_t>(s.int64(c++));
    e.stored_size = static_cast<std::uint64_t>(s.int64(c++));
    e.provenance.producer_version = s.text(c++);
    e.provenance.origin = static_cast<Origin>(s.int64(c++));
    e.provenance.build_time_ms = s.int64(c++);
    e.provenance.build_log = s.text(c++);
    e.created_ms = s.int64(c++);
    e.last_use_ms = s.int64(c++);
    e.hit_count = static_cast<std::uint64_t>(s.int64(c++));
    e.verification = static_cast<Verification>(s.int64(c++));
    e.verified_at_ms = s.int64(c++);
    return e;  // column kInfoColumns - 1 is the row id, used by callers that need it
}

sql::Stat bind_entry(sql::Stmt& s, const EntryInfo& e, const Checksum& checksum) {
    const KeyFields& f = e.fields;
    const Provenance& p = e.provenance;
    return s.bind_all(e.key.hex(), f.key_version, f.kernel_name, f.source_digest,
                      join_entry_points(f.entry_points), f.build_options, f.target_format,
                      f.vendor_id, f.device_name, f.pci_device_id, f.ip_version, f.driver_version,
                      f.platform_name, f.platform_version, f.opencl_c_version, f.address_bits,
                      f.device_uuid, f.driver_uuid, f.compiler_id, static_cast<int>(e.codec),
                      e.raw_size, e.stored_size, p.producer_version, static_cast<int>(p.origin),
                      p.build_time_ms, p.build_log, e.created_ms, e.last_use_ms, e.hit_count,
                      static_cast<int>(e.verification), e.verified_at_ms,
                      std::span<const std::uint8_t>(checksum));
}

Result<Entry, std::string> read_verified(const sql::Stmt& s) {
    Entry out;
    out.info = read_info(s);
    auto bytes = decode_verified(out.info.codec, s.blob(kInfoColumns + 1), out.info.raw_size,
                                 s.blob(kInfoColumns));
    if (!bytes.ok()) {
        return fail(bytes.error().message);
    }
    out.bytes = std::move(bytes).value();
    return out;
}

}  // namespace kcache::store::rows
