#include "kcache/config/text.hpp"

#include <algorithm>
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

// The code point of the valid `n`-byte UTF-8 sequence at `s[i]`.
char32_t code_point(std::string_view s, std::size_t i, std::size_t n) {
    static constexpr std::uint8_t kLead[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
    char32_t c = static_cast<std::uint8_t>(s[i]) & kLead[n];
    for (std::size_t k = 1; k < n; ++k) {
        c = (c << 6) | (static_cast<std::uint8_t>(s[i + k]) & 0x3f);
    }
    return c;
}

// Characters a terminal acts on or draws as nothing: C0 and C1 controls and
// DEL (newline and tab excepted), zero-width and direction marks, bidi
// embeddings, overrides and isolates, line and paragraph separators, and the
// byte-order mark.
bool hidden_or_control(char32_t c) {
    return (c < 0x20 && c != '\n' && c != '\t') || (c >= 0x7f && c <= 0x9f) ||
           (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
           (c >= 0x2060 && c <= 0x2069) || c == 0xfeff;
}

}  // namespace

std::string printable(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = utf8_length(text, i);
        if (n == 0 || hidden_or_control(code_point(text, i, n))) {
            for (std::size_t k = 0; k < std::max<std::size_t>(n, 1); ++k, ++i) {
                const auto b = static_cast<std::uint8_t>(text[i]);
                out += "\\x";
                out += kHex[b >> 4];
                out += kHex[b & 0xf];
            }
            continue;
        }
        out.append(text.substr(i, n));
        i += n;
    }
    return out;
}

}  // namespace kcache::service
