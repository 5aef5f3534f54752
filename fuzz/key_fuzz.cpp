// Key serialization (the canonical bytes that make_key() hashes): round trip
// and injectivity. The input describes a KeyFields `a` and then a few edits
// that turn a copy of it into `b`, so that the two are often nearly equal.
//
// Invariants:
//   - the serialization parses back, with a decoder written here from the
//     grammar in key.cpp, to exactly normalized(a) (so it is injective on
//     normalized fields);
//   - normalizing is idempotent;
//   - serialize(a) == serialize(b) exactly when differing_fields(a, b) is
//     empty, and then make_key(a) == make_key(b);
//   - Key::hex() and Key::parse_hex() round-trip.

#include <algorithm>
#include <cctype>
#include <optional>

#include "key_fields.hpp"

namespace {

using kcache::fuzz::Bytes;
using kcache::fuzz::check;
using kcache::fuzz::number_field;
using kcache::fuzz::string_field;
using kcache::store::KeyFields;

// One edit of `k`: a field replaced, a byte appended, an entry point added or dropped.
void edit(KeyFields& k, Bytes& in) {
    const std::uint8_t op = in.u8();
    switch (op % 5) {
        case 0:
            *string_field(k, in.u8()) = in.str();
            break;
        case 1:
            string_field(k, in.u8())->push_back(static_cast<char>(in.u8()));
            break;
        case 2:
            *number_field(k, in.u8()) = in.u32();
            break;
        case 3:
            k.entry_points.push_back(in.str());
            break;
        default:
            if (!k.entry_points.empty()) {
                k.entry_points.erase(k.entry_points.begin() + in.u8() % k.entry_points.size());
            }
    }
}

// Decodes the serialization grammar of key.cpp; nullopt when `s` does not follow it.
class Decoder {
  public:
    explicit Decoder(std::string_view s) : s_(s) {}

    std::optional<KeyFields> decode() {
        KeyFields k;
        if (!literal("kcache.key") || !u32(k.key_version)) {
            return std::nullopt;
        }
        std::string* strings[] = {&k.source_digest,
                                  nullptr,
                                  &k.build_options,
                                  &k.target_format,
                                  nullptr,
                                  &k.device_name,
                                  nullptr,
                                  nullptr,
                                  &k.driver_version,
                                  &k.platform_name,
                                  &k.platform_version,
                                  &k.opencl_c_version,
                                  nullptr,
                                  &k.device_uuid,
                                  &k.driver_uuid,
                                  &k.compiler_id};
        std::uint32_t* numbers[] = {nullptr,        nullptr, nullptr,          nullptr,
                                    &k.vendor_id,   nullptr, &k.pci_device_id, &k.ip_version,
                                    nullptr,        nullptr, nullptr,          nullptr,
                                    &k.address_bits};
        for (int tag = 1; tag <= 16; ++tag) {
            std::uint8_t got = 0;
            if (!byte(got) || got != tag) {
                return std::nullopt;
            }
            bool ok = tag == 2                                   ? list(k.entry_points)
                      : tag <= 13 && numbers[tag - 1] != nullptr ? u32(*numbers[tag - 1])
                                                                 : str(*strings[tag - 1]);
            if (!ok) {
                return std::nullopt;
            }
        }
        if (pos_ != s_.size()) {
            return std::nullopt;
        }
        return k;
    }

  private:
    bool literal(std::string_view l) {
        if (s_.substr(pos_, l.size()) != l) {
            return false;
        }
        pos_ += l.size();
        return true;
    }
    bool byte(std::uint8_t& v) {
        if (pos_ >= s_.size()) {
            return false;
        }
        v = static_cast<std::uint8_t>(s_[pos_++]);
        return true;
    }
    bool uint(std::uint64_t& v, int n) {
        v = 0;
        for (int i = 0; i < n; ++i) {
            std::uint8_t b = 0;
            if (!byte(b)) {
                return false;
            }
            v |= std::uint64_t{b} << (8 * i);
        }
        return true;
    }
    bool u32(std::uint32_t& v) {
        std::uint64_t x = 0;
        return uint(x, 4) && (v = static_cast<std::uint32_t>(x), true);
    }
    bool str(std::string& out) {
        std::uint64_t n = 0;
        if (!uint(n, 8) || n > s_.size() - pos_) {
            return false;
        }
        out = std::string(s_.substr(pos_, n));
        pos_ += n;
        return true;
    }
    bool list(std::vector<std::string>& out) {
        std::uint64_t n = 0;
        if (!uint(n, 8) || n > s_.size() - pos_) {
            return false;
        }
        out.resize(n);
        return std::all_of(out.begin(), out.end(), [&](std::string& e) { return str(e); });
    }

    std::string_view s_;
    std::size_t pos_ = 0;
};

// `k` without its descriptive name, which is not part of the key.
KeyFields hashed_only(KeyFields k) {
    k.kernel_name.clear();
    return k;
}

void check_hex(Bytes& in) {
    const std::string text = in.take(64);
    kcache::store::Key key;
    if (key.parse_hex(text)) {
        std::string lower = text;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        check(key.hex() == lower, "Key::parse_hex then hex() does not give the text back");
    }
    kcache::store::Key again;
    check(again.parse_hex(key.hex()) && again == key, "Key::hex() does not parse back");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace kcache::store;
    Bytes in(data, size);
    const KeyFields a = kcache::fuzz::read_key_fields(in);
    KeyFields b = a;
    for (int n = in.u8() % 4; n > 0; --n) {
        edit(b, in);
    }
    check_hex(in);

    const std::string sa = serialize_key_fields(a);
    const std::string sb = serialize_key_fields(b);
    const KeyFields na = normalized(a);
    auto decoded = Decoder(sa).decode();
    check(decoded.has_value(), "a key serialization does not follow its grammar");
    check(*decoded == hashed_only(na), "a key serialization does not decode to its fields");
    check(normalized(na) == na && serialize_key_fields(na) == sa, "normalizing is not idempotent");

    const bool same_bytes = sa == sb;
    const bool no_difference = differing_fields(a, b).empty();
    check(same_bytes == no_difference, "differing_fields disagrees with the serialization");
    check(same_bytes == (hashed_only(na) == hashed_only(normalized(b))),
          "two different normalized keys serialize alike (or equal ones differently)");
    if (same_bytes) {
        check(make_key(a) == make_key(b), "equal serializations give different keys");
    }
    return 0;
}
