#include "kcache/device_db/version.hpp"

#include <charconv>

namespace kcache::device_db {
namespace {

// Parses one decimal component at the start of `text`; advances past it.
std::optional<std::uint64_t> take_number(std::string_view& text) {
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end == text.data()) {
        return std::nullopt;
    }
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    return value;
}

// Reads "N(.N)*" from the front of `text`; leaves the rest in `text`.
std::vector<std::uint64_t> take_dotted(std::string_view& text) {
    std::vector<std::uint64_t> parts;
    while (true) {
        auto n = take_number(text);
        if (!n) {
            return {};
        }
        parts.push_back(*n);
        if (text.size() < 2 || text.front() != '.' || text[1] < '0' || text[1] > '9') {
            return parts;
        }
        text.remove_prefix(1);
    }
}

}  // namespace

std::optional<DriverVersion> DriverVersion::parse(std::string_view text) {
    if (text.empty() || text.front() < '0' || text.front() > '9') {
        return std::nullopt;
    }
    DriverVersion v;
    v.parts_ = take_dotted(text);
    if (v.parts_.empty() || !text.empty()) {
        return std::nullopt;
    }
    return v;
}

std::optional<DriverVersion> DriverVersion::parse_prefix(std::string_view text) {
    if (text.empty() || text.front() < '0' || text.front() > '9') {
        return std::nullopt;
    }
    DriverVersion v;
    v.parts_ = take_dotted(text);
    if (v.parts_.empty()) {
        return std::nullopt;
    }
    return v;
}

std::string DriverVersion::to_string() const {
    std::string out;
    for (std::uint64_t p : parts_) {
        if (!out.empty()) {
            out += '.';
        }
        out += std::to_string(p);
    }
    return out;
}

std::strong_ordering operator<=>(const DriverVersion& a, const DriverVersion& b) {
    const std::size_t n = std::max(a.parts_.size(), b.parts_.size());
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t x = i < a.parts_.size() ? a.parts_[i] : 0;
        const std::uint64_t y = i < b.parts_.size() ? b.parts_[i] : 0;
        if (x != y) {
            return x <=> y;
        }
    }
    return std::strong_ordering::equal;
}

bool VersionRange::contains(const DriverVersion& v) const {
    return (!min || *min <= v) && (!max || v <= *max);
}

std::optional<IpVersion> IpVersion::parse(std::string_view text) {
    auto v = DriverVersion::parse(text);
    if (!v || v->parts().size() != 3) {
        return std::nullopt;
    }
    const auto& p = v->parts();
    if (p[0] >= (1u << 10) || p[1] >= (1u << 8) || p[2] >= (1u << 6)) {
        return std::nullopt;
    }
    return IpVersion{static_cast<std::uint32_t>(p[0]), static_cast<std::uint32_t>(p[1]),
                     static_cast<std::uint32_t>(p[2])};
}

IpVersion IpVersion::decode(std::uint32_t raw) {
    return IpVersion{raw >> 22, (raw >> 14) & 0xffu, raw & 0x3fu};
}

std::uint32_t IpVersion::encode() const {
    return (major << 22) | (minor << 14) | revision;
}

std::string IpVersion::to_string() const {
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(revision);
}

}  // namespace kcache::device_db
