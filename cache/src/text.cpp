#include "kcache/cache/text.hpp"

#include <cstdint>

namespace kcache::service {
namespace {

// Length of the valid UTF-8 sequence starting at `s[i]` (1–4), or 0.
std::size_t utf8_length(std::string_view s, std::size_t i) {
    const auto b = static_cast<std::uint8_t>(s[i]);
    const std::size_t n = b < 0x80           ? 1
                          : (b >> 5) == 0x6  ? 2
                          : (b >> 4) == 0xe  ? 3
                          : (b >> 3) == 0x1e ? 4
                                             : 0;
    if (n == 0 || i + n > s.size() || (n == 2 && b < 0xc2)) {
        return 0;
    }
    for (std::size_t k = 1; k < n; ++k) {
        if ((static_cast<std::uint8_t>(s[i + k]) & 0xc0) != 0x80) {
            return 0;
        }
    }
    return n;
}

}  // namespace

std::string printable(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto b = static_cast<std::uint8_t>(text[i]);
        const std::size_t n = utf8_length(text, i);
        const bool control = n == 1 && (b < 0x20 || b == 0x7f) && b != '\n' && b != '\t';
        if (n == 0 || control) {
            out += "\\x";
            out += kHex[b >> 4];
            out += kHex[b & 0xf];
            ++i;
            continue;
        }
        out.append(text.substr(i, n));
        i += n;
    }
    return out;
}

}  // namespace kcache::service
