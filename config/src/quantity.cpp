#include "kcache/config/quantity.hpp"

#include <charconv>
#include <span>

namespace kcache::service {
namespace {

struct Unit {
    std::string_view suffix;
    std::uint64_t factor;
};

enum class Scaled { ok, malformed, too_large };

// Parses digits plus one of `units` into `out`, checking that neither the
// digits nor their product with the unit's factor exceed `max`.
Scaled parse_scaled(std::string_view text, std::span<const Unit> units, std::uint64_t max,
                    std::uint64_t& out) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
        ++digits;
    }
    const std::string_view suffix = text.substr(digits);
    const Unit* unit = nullptr;
    for (const Unit& u : units) {
        unit = u.suffix == suffix ? &u : unit;
    }
    if (digits == 0 || unit == nullptr) {
        return Scaled::malformed;
    }
    std::uint64_t n = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, n);
    if (ec == std::errc::result_out_of_range || n > max / unit->factor) {
        return Scaled::too_large;
    }
    if (ec != std::errc{} || ptr != text.data() + digits) {
        return Scaled::malformed;
    }
    out = n * unit->factor;
    return Scaled::ok;
}

std::string quoted(std::string_view text) {
    return "'" + std::string(text) + "'";
}

}  // namespace

Result<std::uint64_t, QuantityError> parse_size(std::string_view text) {
    static constexpr Unit units[] = {{"", 1},           {"K", 1ull << 10}, {"k", 1ull << 10},
                                     {"M", 1ull << 20}, {"m", 1ull << 20}, {"G", 1ull << 30},
                                     {"g", 1ull << 30}, {"T", 1ull << 40}, {"t", 1ull << 40}};
    std::uint64_t bytes = 0;
    switch (parse_scaled(text, units, kMaxSize, bytes)) {
        case Scaled::ok:
            return bytes;
        case Scaled::too_large:
            return fail(
                QuantityError{QuantityErrc::out_of_range,
                              "out of range: " + quoted(text) + " (at most 2^62 bytes, 4194304T)"});
        case Scaled::malformed:
            break;
    }
    return fail(QuantityError{QuantityErrc::malformed,
                              "not a size: " + quoted(text) + " (examples: 4096, 512K, 500M, 2G)"});
}

Result<std::chrono::milliseconds, QuantityError> parse_duration(std::string_view text,
                                                                BareUnit bare) {
    const Unit units[] = {{"", bare == BareUnit::seconds ? 1000u : 1u},
                          {"ms", 1},
                          {"s", 1000},
                          {"m", 60'000},
                          {"h", 3'600'000},
                          {"d", 86'400'000}};
    std::uint64_t ms = 0;
    switch (parse_scaled(text, units, static_cast<std::uint64_t>(kMaxDuration.count()), ms)) {
        case Scaled::ok:
            return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
        case Scaled::too_large:
            return fail(
                QuantityError{QuantityErrc::out_of_range,
                              "out of range: " + quoted(text) + " (at most 100 years, 36500d)"});
        case Scaled::malformed:
            break;
    }
    return fail(QuantityError{QuantityErrc::malformed, "not a duration: " + quoted(text) +
                                                           " (examples: 1500ms, 90s, 5m, 2h, 7d)"});
}

}  // namespace kcache::service
