#include "kcache/device_db/ids.hpp"

#include <cstdio>

namespace kcache::device_db {

std::string hex_id(std::uint32_t id) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%04x", id);
    return buf;
}

std::optional<std::uint32_t> parse_hex_id(std::string_view text) {
    if (text.size() < 3 || text.size() > 10 || text[0] != '0' ||
        (text[1] != 'x' && text[1] != 'X')) {
        return std::nullopt;
    }
    std::uint32_t value = 0;
    for (char c : text.substr(2)) {
        int digit = -1;
        if (c >= '0' && c <= '9') {
            digit = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            digit = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            digit = c - 'A' + 10;
        }
        if (digit < 0) {
            return std::nullopt;
        }
        value = value * 16 + static_cast<std::uint32_t>(digit);
    }
    return value;
}

}  // namespace kcache::device_db
