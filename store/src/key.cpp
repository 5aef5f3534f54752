// Key serialization and hashing.
//
// The canonical serialization that make_key() hashes with SHA-256. Every
// value is length-prefixed or fixed-size, so no two different field tuples
// serialize to the same bytes (("ab","c") and ("a","bc") differ in length
// prefixes). Fields appear in the fixed order below, each behind its tag.
//
//   record  = magic version field{16}
//   magic   = "kcache.key"                 ; 10 bytes, no terminator
//   version = u32                          ; KeyFields::key_version
//   field   = tag:u8 value
//   value   = u32 | str | list
//   u32     = 4 bytes, little-endian
//   str     = len:u64 byte{len}            ; len 8 bytes little-endian
//   list    = count:u64 str{count}
//
//   tag  name              value      tag  name              value
//    1   source_digest     str         9   driver_version    str
//    2   entry_points      list       10   platform_name     str
//    3   build_options     str        11   platform_version  str
//    4   target_format     str        12   opencl_c_version  str
//    5   vendor_id         u32        13   address_bits      u32
//    6   device_name       str        14   device_uuid       str
//    7   pci_device_id     u32        15   driver_uuid       str
//    8   ip_version        u32        16   compiler_id       str
//
// kernel_name is descriptive and deliberately absent.

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

#include "kcache/common/hex.hpp"
#include "kcache/common/sha256.hpp"
#include "kcache/store/key.hpp"

namespace kcache::store {
namespace {

constexpr std::string_view kMagic = "kcache.key";

void put_u32(std::string& out, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) {
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    }
}

void put_u64(std::string& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    }
}

void put_str(std::string& out, std::string_view s) {
    put_u64(out, s.size());
    out.append(s);
}

// The hashed fields' names, by tag - 1.
constexpr std::array<std::string_view, 16> kFieldNames = {
    "source_digest",  "entry_points",  "build_options",    "target_format",
    "vendor_id",      "device_name",   "pci_device_id",    "ip_version",
    "driver_version", "platform_name", "platform_version", "opencl_c_version",
    "address_bits",   "device_uuid",   "driver_uuid",      "compiler_id"};

// Where each field of a record starts (its tag), and where the record ends.
using FieldStarts = std::array<std::size_t, kFieldNames.size() + 1>;

std::string lower(std::string s) {
    for (char& c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

// The record of normalized(k), written in one buffer without the
// normalized copy (every request keys its fields), with where each field
// starts. The golden record in tests/store/key_test.cpp holds it to the
// format above, and fuzz/key_fuzz.cpp to normalized().
std::string record_of(const KeyFields& k, FieldStarts& starts) {
    std::vector<std::string_view> entries(k.entry_points.begin(), k.entry_points.end());
    std::sort(entries.begin(), entries.end());
    entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
    const std::string options = normalize_build_options(k.build_options);
    std::size_t size = kMagic.size() + 4 + 16 + 12 * 8 + 4 * 4 + 8;
    for (const std::string_view s :
         {std::string_view(k.source_digest), std::string_view(options),
          std::string_view(k.target_format), std::string_view(k.device_name),
          std::string_view(k.driver_version), std::string_view(k.platform_name),
          std::string_view(k.platform_version), std::string_view(k.opencl_c_version),
          std::string_view(k.device_uuid), std::string_view(k.driver_uuid),
          std::string_view(k.compiler_id)}) {
        size += s.size();
    }
    for (const std::string_view e : entries) {
        size += 8 + e.size();
    }
    std::string out;
    out.reserve(size);
    out.append(kMagic);
    put_u32(out, k.key_version);
    const auto tag = [&](std::uint8_t t) {
        starts[t - 1] = out.size();
        out.push_back(static_cast<char>(t));
    };
    const auto lowered = [&](std::string_view s) {
        put_u64(out, s.size());
        for (const char c : s) {
            out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        }
    };
    tag(1), lowered(k.source_digest);
    tag(2), put_u64(out, entries.size());
    for (const std::string_view e : entries) {
        put_str(out, e);
    }
    tag(3), put_str(out, options);
    tag(4), put_str(out, k.target_format);
    tag(5), put_u32(out, k.vendor_id);
    tag(6), put_str(out, k.device_name);
    tag(7), put_u32(out, k.pci_device_id);
    tag(8), put_u32(out, k.ip_version);
    tag(9), put_str(out, k.driver_version);
    tag(10), put_str(out, k.platform_name);
    tag(11), put_str(out, k.platform_version);
    tag(12), put_str(out, k.opencl_c_version);
    tag(13), put_u32(out, k.address_bits);
    tag(14), lowered(k.device_uuid);
    tag(15), lowered(k.driver_uuid);
    tag(16), put_str(out, k.compiler_id);
    starts.back() = out.size();
    return out;
}

}  // namespace

std::string Key::hex() const {
    return to_hex(digest);
}

bool Key::parse_hex(std::string_view text) {
    std::array<std::uint8_t, 32> parsed{};
    if (!kcache::parse_hex(text, parsed.data(), parsed.size())) {
        return false;
    }
    digest = parsed;
    return true;
}

std::string normalize_build_options(std::string_view options) {
    std::string out;
    bool pending_space = false;
    for (char c : options) {
        if (std::isspace(static_cast<unsigned char>(c))) {
            pending_space = !out.empty();
            continue;
        }
        if (pending_space) {
            out.push_back(' ');
            pending_space = false;
        }
        out.push_back(c);
    }
    return out;
}

KeyFields normalized(const KeyFields& fields) {
    KeyFields n = fields;
    std::sort(n.entry_points.begin(), n.entry_points.end());
    n.entry_points.erase(std::unique(n.entry_points.begin(), n.entry_points.end()),
                         n.entry_points.end());
    n.build_options = normalize_build_options(fields.build_options);
    n.device_uuid = lower(fields.device_uuid);
    n.driver_uuid = lower(fields.driver_uuid);
    n.source_digest = lower(fields.source_digest);
    return n;
}

std::string serialize_key_fields(const KeyFields& fields) {
    FieldStarts starts{};
    return record_of(fields, starts);
}

Key make_key(const KeyFields& fields) {
    return Key{sha256(serialize_key_fields(fields))};
}

std::vector<std::string> differing_fields(const KeyFields& a, const KeyFields& b) {
    FieldStarts at{}, bt{};
    const std::string ra = record_of(a, at), rb = record_of(b, bt);
    std::vector<std::string> diff;
    if (a.key_version != b.key_version) {
        diff.emplace_back("key_version");
    }
    for (std::size_t i = 0; i < kFieldNames.size(); ++i) {
        if (std::string_view(ra).substr(at[i], at[i + 1] - at[i]) !=
            std::string_view(rb).substr(bt[i], bt[i + 1] - bt[i])) {
            diff.emplace_back(kFieldNames[i]);
        }
    }
    return diff;
}

}  // namespace kcache::store
