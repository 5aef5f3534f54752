// What the listings of listing.hpp share: the XML scanner, dates, object
// names, and the listing of a backend that has none.

#include "listing.hpp"

#include <algorithm>
#include <cstdio>

namespace kcache::remote {
namespace {

bool hex_digit(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool all_hex(std::string_view s) {
    return std::all_of(s.begin(), s.end(), hex_digit);
}

// The local name of a tag's qualified name ("D:href" → "href").
std::string_view local_name(std::string_view qname) {
    const auto colon = qname.find(':');
    return colon == std::string_view::npos ? qname : qname.substr(colon + 1);
}

// The UTC time of the broken-down fields; nullopt when one is out of range.
std::optional<std::time_t> utc(int year, int month, int day, int hour, int minute, int second) {
    if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
        second > 60 || hour < 0 || minute < 0 || second < 0) {
        return std::nullopt;
    }
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    return ::timegm(&tm);
}

}  // namespace

Result<std::vector<ListedObject>, Failure> Backend::list(const std::string& dir) {
    return fail(listing_failure(
        RemoteErrc::config, "listing " + server_of(dir) + ": this backend cannot list objects"));
}

Failure listing_failure(RemoteErrc code, std::string message, long status) {
    return Failure{RemoteError{code, std::move(message)}, status};
}

std::optional<std::vector<std::string_view>> xml_elements(std::string_view xml,
                                                          std::string_view local) {
    std::vector<std::string_view> out;
    for (std::size_t at = xml.find('<'); at != std::string_view::npos; at = xml.find('<', at)) {
        const std::size_t name_start = at + 1;
        const std::size_t name_end =
            std::min(xml.find_first_of(" \t\r\n/>", name_start), xml.size());
        const std::string_view qname = xml.substr(name_start, name_end - name_start);
        const std::size_t close = xml.find('>', name_end);
        if (close == std::string_view::npos) {
            return std::nullopt;  // a tag cut off
        }
        at = close + 1;
        if (qname.empty() || qname[0] == '/' || qname[0] == '?' || qname[0] == '!' ||
            local_name(qname) != local) {
            continue;
        }
        if (xml[close - 1] == '/') {
            out.emplace_back();  // <D:collection/>
            continue;
        }
        const std::string end_tag = "</" + std::string(qname);
        std::size_t end = xml.find(end_tag, at);
        while (end != std::string_view::npos && end + end_tag.size() < xml.size() &&
               xml[end + end_tag.size()] != '>' && xml[end + end_tag.size()] != ' ') {
            end = xml.find(end_tag, end + 1);
        }
        if (end == std::string_view::npos || end + end_tag.size() >= xml.size()) {
            return std::nullopt;
        }
        out.push_back(xml.substr(at, end - at));
        at = end + end_tag.size();
    }
    return out;
}

std::string xml_text(std::string_view raw) {
    static constexpr std::pair<std::string_view, char> kEntities[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    std::string out;
    for (std::size_t i = 0; i < raw.size();) {
        bool done = false;
        for (const auto& [entity, c] : kEntities) {
            if (raw.substr(i, entity.size()) == entity) {
                out += c;
                i += entity.size();
                done = true;
                break;
            }
        }
        unsigned code = 0;
        int used = 0;
        if (!done && raw.substr(i, 2) == "&#" &&
            std::sscanf(std::string(raw.substr(i, 12)).c_str(), "&#%u;%n", &code, &used) == 1 &&
            used > 0 && code > 0 && code < 128) {
            out += static_cast<char>(code);
            i += static_cast<std::size_t>(used);
            done = true;
        }
        if (!done) {
            out += raw[i++];
        }
    }
    const auto b = out.find_first_not_of(" \t\r\n");
    return b == std::string::npos ? "" : out.substr(b, out.find_last_not_of(" \t\r\n") - b + 1);
}

std::optional<std::time_t> parse_http_date(std::string_view text) {
    static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    int day = 0, year = 0, hour = 0, minute = 0, second = 0, used = 0;
    char weekday[4] = {}, month[4] = {};
    const std::string s(text.substr(0, 64));
    if (std::sscanf(s.c_str(), "%3[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d GMT%n", weekday, &day,
                    month, &year, &hour, &minute, &second, &used) != 7 ||
        static_cast<std::size_t>(used) != s.size()) {
        return std::nullopt;
    }
    for (int m = 0; m < 12; ++m) {
        if (std::string_view(month) == kMonths[m]) {
            return utc(year, m + 1, day, hour, minute, second);
        }
    }
    return std::nullopt;
}

std::optional<std::time_t> parse_iso_time(std::string_view text) {
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, used = 0;
    const std::string s(text.substr(0, 64));
    if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
                    &second, &used) != 6) {
        return std::nullopt;
    }
    std::string_view rest = std::string_view(s).substr(static_cast<std::size_t>(used));
    if (!rest.empty() && rest[0] == '.') {
        const auto digits = rest.find_first_not_of("0123456789", 1);
        rest = digits == std::string_view::npos ? std::string_view() : rest.substr(digits);
    }
    return rest == "Z" ? utc(year, month, day, hour, minute, second) : std::nullopt;
}

std::chrono::seconds age_of(std::time_t t) {
    const std::time_t now = std::time(nullptr);
    return std::chrono::seconds(now > t ? now - t : 0);
}

bool object_name(std::string_view name) {
    return name.size() == 67 && name[2] == '/' && all_hex(name.substr(0, 2)) &&
           all_hex(name.substr(3)) && name.substr(0, 2) == name.substr(3, 2);
}

bool shard_name(std::string_view name) {
    return name.size() == 2 && all_hex(name);
}

}  // namespace kcache::remote
