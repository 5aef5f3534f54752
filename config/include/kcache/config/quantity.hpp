#pragma once
// The one parser of sizes and durations written by people: CLI flags
// (--max-size, --timeout, --older-than), KCACHE_* values and config lines.
// Grammar (no sign, no spaces, no fractions):
//   size     := digits [ 'K' | 'M' | 'G' | 'T' ]            binary units, either case
//   duration := digits [ "ms" | 's' | 'm' | 'h' | 'd' ]     bare digits: see BareUnit
// Every multiplication is checked: a value beyond the documented maximum is
// an error, never a wrapped number.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "kcache/common/result.hpp"

namespace kcache::service {

// The largest size accepted: 2^62 bytes (4 EiB), so that every accepted size
// also fits the signed 64-bit integers SQLite stores.
inline constexpr std::uint64_t kMaxSize = 1ull << 62;

// The largest duration accepted: 100 years.
inline constexpr std::chrono::milliseconds kMaxDuration{100ll * 365 * 86'400'000};

// What a duration written as bare digits counts.
enum class BareUnit { seconds, milliseconds };

// Why a size or duration was refused.
enum class QuantityErrc {
    malformed,     // not digits and a known unit
    out_of_range,  // beyond kMaxSize or kMaxDuration
};

struct QuantityError {
    QuantityErrc code;
    std::string message;  // quotes the text, without the option's name
};

// Returns the bytes `text` names ("4096", "512K", "2G", "1T"), or why not
// ("not a size …": malformed, "out of range …": out_of_range).
Result<std::uint64_t, QuantityError> parse_size(std::string_view text);

// Returns the duration `text` names ("1500ms", "90s", "5m", "2h", "7d"; bare
// digits count `bare`), or why not, as parse_size does. Zero is accepted;
// callers that need a positive value check it.
Result<std::chrono::milliseconds, QuantityError> parse_duration(std::string_view text,
                                                                BareUnit bare);

}  // namespace kcache::service
