// The errata feed's order (kcache/canary/errata_feed.hpp): the stamp a
// document carries, and the versions in force in <store>/errata/feeds.json.

#include "kcache/canary/errata_feed.hpp"

#include <cinttypes>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "kcache/canary/errata.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/common/work.hpp"
#include "kcache/sign/signature.hpp"

namespace kcache::errata {
namespace fs = std::filesystem;
using canary::CanaryErrc;
using canary::CanaryError;
namespace {

using nlohmann::json;

constexpr std::size_t kMaxFeedsFileBytes = 1 << 20;

fs::path feeds_file(const fs::path& store_dir) {
    return errata_dir(store_dir) / "feeds.json";
}

// "3 h", "20 d", "45 s": a duration as doctor prints it.
std::string span_text(std::time_t seconds) {
    const std::time_t s = seconds < 0 ? -seconds : seconds;
    return s >= 2 * 86400  ? std::to_string(s / 86400) + " d"
           : s >= 2 * 3600 ? std::to_string(s / 3600) + " h"
           : s >= 120      ? std::to_string(s / 60) + " min"
                           : std::to_string(s) + " s";
}

}  // namespace

std::optional<std::time_t> parse_utc(std::string_view text) {
    if (text.size() != 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' ||
        text[13] != ':' || text[16] != ':' || text[19] != 'Z') {
        return std::nullopt;
    }
    int v[6] = {};
    const int at[6] = {0, 5, 8, 11, 14, 17};
    const int len[6] = {4, 2, 2, 2, 2, 2};
    for (int i = 0; i < 6; ++i) {
        for (int j = 0; j < len[i]; ++j) {
            const char c = text[static_cast<std::size_t>(at[i] + j)];
            if (c < '0' || c > '9') {
                return std::nullopt;
            }
            v[i] = v[i] * 10 + (c - '0');
        }
    }
    std::tm tm{};
    tm.tm_year = v[0] - 1900;
    tm.tm_mon = v[1] - 1;
    tm.tm_mday = v[2];
    tm.tm_hour = v[3];
    tm.tm_min = v[4];
    tm.tm_sec = v[5];
    const std::time_t t = ::timegm(&tm);
    // timegm normalizes (Feb 30 → Mar 2): a date that moved was not a date.
    if (v[1] < 1 || v[1] > 12 || format_utc(t) != text) {
        return std::nullopt;
    }
    return t;
}

std::string format_utc(std::time_t t) {
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char out[80];  // room for any int fields, which gcc cannot bound
    std::snprintf(out, sizeof out, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    return out;
}

Result<FeedStamp, CanaryError> feed_stamp(std::string_view document) {
    work::add(work::Item::json_parsed);
    const json doc = json::parse(document, nullptr, false);
    if (!doc.is_object()) {
        return fail(CanaryError{CanaryErrc::damaged, "not a JSON object"});
    }
    FeedStamp stamp;
    if (auto v = doc.find("version"); v != doc.end()) {
        if (!v->is_number_unsigned() || v->get<std::uint64_t>() == 0) {
            return fail(CanaryError{CanaryErrc::damaged,
                                    "\"version\" must be a whole number of at least 1"});
        }
        stamp.version = v->get<std::uint64_t>();
    }
    if (auto e = doc.find("expires"); e != doc.end()) {
        stamp.expires = e->is_string() ? parse_utc(e->get<std::string>()) : std::nullopt;
        if (!stamp.expires) {
            return fail(CanaryError{CanaryErrc::damaged,
                                    "\"expires\" must be a UTC time as YYYY-MM-DDTHH:MM:SSZ"});
        }
    }
    return stamp;
}

Result<std::vector<FeedInForce>, CanaryError> feeds_in_force(const fs::path& store_dir) {
    const fs::path path = feeds_file(store_dir);
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path, ec))) {
        return std::vector<FeedInForce>();
    }
    auto text = read_regular_file(path, kMaxFeedsFileBytes);
    if (!text) {
        return fail(CanaryError{CanaryErrc::io, text.error().message});
    }
    std::vector<FeedInForce> out;
    try {
        work::add(work::Item::json_parsed);
        const json doc = json::parse(*text);  // alive through the loop below
        for (const auto& [feed, f] : doc.at("feeds").items()) {
            FeedInForce in{feed, f.at("version").get<std::uint64_t>(), std::nullopt,
                           f.at("imported").get<std::time_t>()};
            if (f.contains("expires")) {
                in.expires = f.at("expires").get<std::time_t>();
            }
            out.push_back(std::move(in));
        }
    } catch (const json::exception& e) {
        return fail(CanaryError{CanaryErrc::damaged, path.string() + ": damaged (" + e.what() +
                                                         "); remove it to start afresh"});
    }
    return out;
}

std::optional<std::string> refusal(const std::vector<FeedInForce>& in_force,
                                   const std::string& feed, const FeedStamp& stamp,
                                   std::time_t now) {
    std::string kept = "; the errata in force are kept";
    for (const FeedInForce& f : in_force) {
        if (f.feed == feed) {
            kept = "; the errata in force (version " + std::to_string(f.version) + ") are kept";
            if (stamp.version && *stamp.version < f.version) {
                return "version " + std::to_string(*stamp.version) + " of feed " + feed +
                       " is older than version " + std::to_string(f.version) +
                       " in force (a replayed document?)" + kept;
            }
        }
    }
    if (stamp.expires && *stamp.expires < now) {
        return "stale: it expired at " + format_utc(*stamp.expires) + kept;
    }
    return std::nullopt;
}

Status<std::string> record_in_force(const fs::path& store_dir, const std::string& feed,
                                    const FeedStamp& stamp, std::time_t now) {
    auto have = feeds_in_force(store_dir);
    if (!have) {
        return fail(have.error().message);
    }
    json feeds = json::object();
    for (const FeedInForce& f : *have) {
        feeds[f.feed] = {{"version", f.version}, {"imported", f.imported}};
        if (f.expires) {
            feeds[f.feed]["expires"] = *f.expires;
        }
    }
    feeds[feed] = {{"version", stamp.version.value_or(0)}, {"imported", now}};
    if (stamp.expires) {
        feeds[feed]["expires"] = *stamp.expires;
    }
    auto written = store::write_text_file(
        feeds_file(store_dir), json{{"feeds", feeds}}.dump(2) + "\n", 0600, store::Replace::yes);
    if (!written) {
        return fail(written.error().message);
    }
    return Ok{};
}

std::string describe(const FeedInForce& f, std::time_t now, bool& stale) {
    stale = f.expires && *f.expires < now;
    std::string text =
        "version " + std::to_string(f.version) + " from " +
        (f.feed == "unsigned" ? std::string("unsigned documents") : "key " + f.feed) +
        ", imported " + span_text(now - f.imported) + " ago";
    if (!f.expires) {
        return text + ", no expiry";
    }
    return text + (stale ? ", stale: expired " + span_text(now - *f.expires) +
                               " ago (its errata still apply; import a newer version)"
                         : ", expires in " + span_text(*f.expires - now));
}

}  // namespace kcache::errata
