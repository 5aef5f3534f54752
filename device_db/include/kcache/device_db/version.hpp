#pragma once
// Driver and IP versions, compared numerically component by component.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kcache::device_db {

// A dotted numeric version such as "23.17.26241.33" or "1.3.26241".
// Missing trailing components compare as 0, so "1.2" == "1.2.0".
class DriverVersion {
  public:
    // Parses "N(.N)*"; returns nullopt on anything else (empty parts, signs, letters).
    static std::optional<DriverVersion> parse(std::string_view text);
    // Parses the leading "N(.N)*" of a driver's free-form version string ("3.1+debian"
    // → 3.1); nullopt when it does not start with a digit.
    static std::optional<DriverVersion> parse_prefix(std::string_view text);

    const std::vector<std::uint64_t>& parts() const { return parts_; }
    std::string to_string() const;

    friend std::strong_ordering operator<=>(const DriverVersion& a, const DriverVersion& b);
    friend bool operator==(const DriverVersion& a, const DriverVersion& b) {
        return (a <=> b) == std::strong_ordering::equal;
    }

  private:
    std::vector<std::uint64_t> parts_;
};

// An inclusive driver version range; an absent bound is open.
struct VersionRange {
    std::optional<DriverVersion> min;
    std::optional<DriverVersion> max;

    bool contains(const DriverVersion& v) const;

    friend bool operator==(const VersionRange&, const VersionRange&) = default;
};

// Intel's GPU IP version "major.minor.revision", encoded by the Intel runtime (and
// reported by CL_DEVICE_IP_VERSION_INTEL) as major:10 bits <<22 | minor:8 bits <<14 |
// revision:6 bits (bits 6..13 reserved).
struct IpVersion {
    std::uint32_t major = 0;
    std::uint32_t minor = 0;
    std::uint32_t revision = 0;

    // Parses "12.55.8"; nullopt when malformed or a field overflows its bits.
    static std::optional<IpVersion> parse(std::string_view text);
    static IpVersion decode(std::uint32_t raw);
    std::uint32_t encode() const;
    std::string to_string() const;

    friend auto operator<=>(const IpVersion&, const IpVersion&) = default;
};

}  // namespace kcache::device_db
