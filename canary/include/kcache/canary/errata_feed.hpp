#pragma once
// The errata feed's order: a signed errata document (a file or a pack's)
// may carry
//
//   "version": uint64 ≥ 1      (each publication of a feed a larger one),
//   "expires": "YYYY-MM-DDTHH:MM:SSZ"   (UTC; after it the document is stale)
//
// beside "format" and "errata". A feed is the key that signed it ("unsigned"
// for none). The node keeps the version in force per feed in
// <store>/errata/feeds.json; an import of an older version of a feed is a
// replay and is refused (it could bring back what a newer one dropped, or
// hide a newer erratum behind an old expiry), an expired document is stale
// and refused, and either way the errata in force stay. The errata a
// document without a version carries are merged as before (no order to keep).

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kcache/canary/error.hpp"
#include "kcache/common/result.hpp"

namespace kcache::errata {

// What a document says of its place in its feed.
struct FeedStamp {
    std::optional<std::uint64_t> version;
    std::optional<std::time_t> expires;  // seconds since the epoch, UTC
};

// The document's "version" and "expires" (absent when it has none); error:
// a field of the wrong type or form, named.
Result<FeedStamp, canary::CanaryError> feed_stamp(std::string_view document);

// "2027-01-31T00:00:00Z" and back; nullopt for any other form.
std::optional<std::time_t> parse_utc(std::string_view text);
std::string format_utc(std::time_t t);

// A feed as this node holds it.
struct FeedInForce {
    std::string feed;  // signer key id (hex) or "unsigned"
    std::uint64_t version = 0;
    std::optional<std::time_t> expires;
    std::time_t imported = 0;
};

// The feeds in force on the node (none when it has imported no versioned
// document); error: feeds.json unreadable or damaged, named.
Result<std::vector<FeedInForce>, canary::CanaryError> feeds_in_force(
    const std::filesystem::path& store_dir);

// Whether a document of `feed` stamped `stamp` may be imported at `now`
// (null) or why not: older than the version in force (a replay), or expired.
std::optional<std::string> refusal(const std::vector<FeedInForce>& in_force,
                                   const std::string& feed, const FeedStamp& stamp,
                                   std::time_t now);

// Records `stamp` (which has a version) as `feed`'s version in force,
// imported at `now`; replaced atomically under the errata lock.
Status<std::string> record_in_force(const std::filesystem::path& store_dir, const std::string& feed,
                                    const FeedStamp& stamp, std::time_t now);

// "version 5 from key …, imported 3 h ago, expires in 20 d" (or "stale:
// expired 2 d ago") for doctor; `stale` set when it expired before `now`.
std::string describe(const FeedInForce& f, std::time_t now, bool& stale);

}  // namespace kcache::errata
