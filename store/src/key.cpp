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
#include <cctype>

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

// Calls `f(tag, name, encoded_value)` for each hashed field, in key order.
template <class F>
void for_each_hashed_field(const KeyFields& k, F&& f) {
    auto str = [](std::string_view s) {
        std::string out;
        put_str(out, s);
        return out;
    };
    auto u32 = [](std::uint32_t v) {
        std::string out;
        put_u32(out, v);
        return out;
    };
    std::string list;
    put_u64(list, k.entry_points.size());
    for (const auto& e : k.entry_points) {
        put_str(list, e);
    }
    f(1, "source_digest", str(k.source_digest));
    f(2, "entry_points", list);
    f(3, "build_options", str(k.build_options));
    f(4, "target_format", str(k.target_format));
    f(5, "vendor_id", u32(k.vendor_id));
    f(6, "device_name", str(k.device_name));
    f(7, "pci_device_id", u32(k.pci_device_id));
    f(8, "ip_version", u32(k.ip_version));
    f(9, "driver_version", str(k.driver_version));
    f(10, "platform_name", str(k.platform_name));
    f(11, "platform_version", str(k.platform_version));
    f(12, "opencl_c_version", str(k.opencl_c_version));
    f(13, "address_bits", u32(k.address_bits));
    f(14, "device_uuid", str(k.device_uuid));
    f(15, "driver_uuid", str(k.driver_uuid));
    f(16, "compiler_id", str(k.compiler_id));
}

std::string lower(std::string s) {
    for (char& c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
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
    const KeyFields n = normalized(fields);
    std::string out(kMagic);
    put_u32(out, n.key_version);
    for_each_hashed_field(n, [&](std::uint8_t tag, std::string_view, const std::string& value) {
        out.push_back(static_cast<char>(tag));
        out += value;
    });
    return out;
}

Key make_key(const KeyFields& fields) {
    return Key{sha256(serialize_key_fields(fields))};
}

std::vector<std::string> differing_fields(const KeyFields& a, const KeyFields& b) {
    std::vector<std::pair<std::string_view, std::string>> left;
    for_each_hashed_field(normalized(a), [&](std::uint8_t, std::string_view name, std::string v) {
        left.emplace_back(name, std::move(v));
    });
    std::vector<std::string> diff;
    if (a.key_version != b.key_version) {
        diff.emplace_back("key_version");
    }
    std::size_t i = 0;
    for_each_hashed_field(normalized(b),
                          [&](std::uint8_t, std::string_view name, const std::string& v) {
                              if (left[i++].second != v) {
                                  diff.emplace_back(name);
                              }
                          });
    return diff;
}

}  // namespace kcache::store
