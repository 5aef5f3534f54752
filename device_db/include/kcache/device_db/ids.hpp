#pragma once
// PCI-style ids as written in data files, sysfs and messages.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kcache::device_db {

// "0x56a0"-style lowercase hex with the 0x prefix and at least four digits.
std::string hex_id(std::uint32_t id);

// "0x56a0" or "0X56A0" → 0x56a0: "0x" and one to eight hex digits; nullopt otherwise.
std::optional<std::uint32_t> parse_hex_id(std::string_view text);

}  // namespace kcache::device_db
