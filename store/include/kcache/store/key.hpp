#pragma once
// The cache key (docs/design.md, "Identity and the key"): every field that decides
// the bytes of a device binary, as plain data, and its SHA-256 digest over a
// versioned, length-prefixed canonical serialization (grammar in key.cpp).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <vector>
#include "kcache/common/sha256.hpp"

namespace kcache::store {

// Version of the key serialization; bumping it changes every key.
inline constexpr std::uint32_t kKeyFormatVersion = 1;

// Every input of a compile that can change the binary. `kernel_name` is
// descriptive only and is NOT part of the key: a name alone never decides it.
struct KeyFields {
    std::uint32_t key_version = kKeyFormatVersion;
    std::string kernel_name;                // descriptive only, not hashed
    std::string source_digest;              // sha256_hex of all text reaching the compiler
    std::vector<std::string> entry_points;  // sorted and de-duplicated by normalized()
    std::string build_options;              // whitespace collapsed by normalized()
    std::string target_format;              // "native", "spirv", "ptx", …
    std::uint32_t vendor_id = 0;
    std::string device_name;
    std::uint32_t pci_device_id = 0;  // 0 when unknown
    std::uint32_t ip_version = 0;     // 0 when unknown
    std::string driver_version;
    std::string platform_name;
    std::string platform_version;
    std::string opencl_c_version;
    std::uint32_t address_bits = 0;
    std::string device_uuid;  // lower-case hex, empty when unknown
    std::string driver_uuid;  // lower-case hex, empty when unknown
    std::string compiler_id;  // JIT: driver version/UUID; AOT: ocloc version + library digest

    bool operator==(const KeyFields&) const = default;
};

// A key: the SHA-256 digest of a KeyFields' canonical serialization.
struct Key {
    std::array<std::uint8_t, 32> digest{};

    // Returns the 64-character lower-case hex form.
    std::string hex() const;
    // Parses a 64-character hex string; returns false (and leaves *this) on bad input.
    bool parse_hex(std::string_view text);
    bool operator==(const Key&) const = default;
    auto operator<=>(const Key&) const = default;
};

// Returns `options` with runs of whitespace collapsed to one space, trimmed.
std::string normalize_build_options(std::string_view options);

// Returns `fields` in canonical form: entry points sorted and unique, build
// options collapsed, UUIDs lower-cased. make_key() applies this itself.
KeyFields normalized(const KeyFields& fields);

// Returns the key of `fields` (normalized first).
Key make_key(const KeyFields& fields);

// Returns the canonical serialization that make_key() hashes (normalized first).
std::string serialize_key_fields(const KeyFields& fields);

// Returns the names of the hashed fields that differ between `a` and `b`
// after normalization ("build_options", "driver_version", …); empty when the
// two describe the same key. `kernel_name` is never reported.
std::vector<std::string> differing_fields(const KeyFields& a, const KeyFields& b);

}  // namespace kcache::store
