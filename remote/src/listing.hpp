#pragma once
// Listing a namespace's objects for `kcache remote gc` (Backend::list): the
// WebDAV and S3 listings over the HTTP transport, and what they share: a
// small scanner of the XML those servers answer, their two date formats, and
// which names are objects. Redis lists in redis_scan.cpp. Internal.

#include <chrono>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend.hpp"

namespace kcache::remote {

class Http;

// WebDAV: PROPFIND (Depth: 1) of `dir`, then of each of its "<2 hex>/"
// collections, and the getlastmodified of each object there. A `dir` that
// does not exist (404) holds nothing; a server that cannot list (405, 501:
// nginx without the dav-ext module) is a failure that says so; an answer
// that is not a whole multistatus document is a failure naming the URL.
Result<std::vector<ListedObject>, Failure> webdav_list(Http& http, const std::string& dir);

// S3: ListObjectsV2 of the prefix of `dir` (s3://bucket/prefix/…/), page by
// page (continuation token), each page a GET through `s3` (the S3 backend,
// which signs it); LastModified as the age.
Result<std::vector<ListedObject>, Failure> s3_list(Backend& s3, const std::string& dir);

// The raw contents of each element of `xml` whose local name is `local`
// (any namespace prefix: <D:href>, <href>), in document order; "" for an
// empty element (<D:collection/>). Nested elements of the same name are not
// told apart. nullopt when an element named `local` is not closed.
std::optional<std::vector<std::string_view>> xml_elements(std::string_view xml,
                                                          std::string_view local);
// `raw` with the five XML entities and numeric references (ASCII) decoded
// and surrounding blanks dropped.
std::string xml_text(std::string_view raw);

// The time of an HTTP date ("Sun, 06 Nov 1994 08:49:37 GMT", RFC 9110's
// IMF-fixdate) or of an ISO 8601 UTC time ("2024-01-02T03:04:05.000Z");
// nullopt for anything else.
std::optional<std::time_t> parse_http_date(std::string_view text);
std::optional<std::time_t> parse_iso_time(std::string_view text);
// Seconds from `t` to now (0 for a time in the future).
std::chrono::seconds age_of(std::time_t t);

// True for the name of an object below a namespace's directory:
// "<2 hex>/<64 hex>", the 2 being the first two of the 64 (lower case).
bool object_name(std::string_view name);
// True for "<2 hex>" (a collection of objects).
bool shard_name(std::string_view name);

// A failure of a listing: `code` with `message`.
Failure listing_failure(RemoteErrc code, std::string message, long status = 0);

}  // namespace kcache::remote
