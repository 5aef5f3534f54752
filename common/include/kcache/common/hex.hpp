#pragma once
// The one hexadecimal encoder and decoder of the tree (lower-case digits).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kcache {

// Returns `n` bytes at `data` as 2n lower-case hex digits.
inline std::string to_hex(const void* data, std::size_t n) {
    static constexpr char kDigits[] = "0123456789abcdef";
    const auto* bytes = static_cast<const std::uint8_t*>(data);
    std::string out(2 * n, '0');
    for (std::size_t i = 0; i < n; ++i) {
        out[2 * i] = kDigits[bytes[i] >> 4];
        out[2 * i + 1] = kDigits[bytes[i] & 0xf];
    }
    return out;
}

// Returns a contiguous byte container (std::array, std::vector, …) as hex.
template <class Bytes>
std::string to_hex(const Bytes& bytes) {
    return to_hex(bytes.data(), bytes.size());
}

// Returns the value of one hex digit (either case), or -1.
inline int hex_digit_value(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

// Decodes exactly 2n hex digits of `text` into `out[0..n)`; false (and `out`
// unspecified) when the length is not 2n or a character is not a hex digit.
inline bool parse_hex(std::string_view text, std::uint8_t* out, std::size_t n) {
    if (text.size() != 2 * n) {
        return false;
    }
    for (std::size_t i = 0; i < n; ++i) {
        const int hi = hex_digit_value(text[2 * i]);
        const int lo = hex_digit_value(text[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return false;
        }
        out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
    }
    return true;
}

}  // namespace kcache
