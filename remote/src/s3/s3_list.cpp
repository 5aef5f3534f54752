// The S3 listing of a namespace (listing.hpp): ListObjectsV2 of the key
// prefix of the namespace's directory, GET
// <bucket>/?[continuation-token=T&]list-type=2&prefix=P, signed by the S3
// backend (the query's parameters in the order SigV4 sorts them). A page:
//
//   page     := <ListBucketResult> … <IsTruncated>true|false</IsTruncated>
//               [<NextContinuationToken>T</NextContinuationToken>] contents* </ListBucketResult>
//   contents := <Contents> <Key>P…</Key> <LastModified>ISO 8601</LastModified> … </Contents>

#include <string>

#include "listing.hpp"

namespace kcache::remote {
namespace {

constexpr std::string_view kScheme = "s3://";
// A bound on pages (1000 keys each): a server that keeps answering "truncated"
// with new tokens cannot keep gc listing for ever.
constexpr int kMaxPages = 100'000;

// `s` as a query value: unreserved characters kept, every other byte %XX.
std::string query_escaped(std::string_view s) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                           (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
        if (plain) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}

struct Page {
    std::vector<ListedObject> objects;
    std::string next;  // the continuation token; empty on the last page
};

// The objects of the page `body` whose keys are objects below `prefix`.
Result<Page, Failure> parse_page(const store::Bytes& body, const std::string& prefix,
                                 const std::string& url) {
    const std::string_view xml(reinterpret_cast<const char*>(body.data()), body.size());
    auto bad = [&](const std::string& why) {
        return fail(listing_failure(RemoteErrc::corrupt,
                                    "GET " + url + ": not a ListObjectsV2 page (" + why + ")"));
    };
    const auto root = xml_elements(xml, "ListBucketResult");
    if (!root || root->size() != 1) {
        return bad(root ? "no ListBucketResult element" : "cut off: an element is not closed");
    }
    const auto truncated = xml_elements(root->front(), "IsTruncated");
    const auto token = xml_elements(root->front(), "NextContinuationToken");
    const auto contents = xml_elements(root->front(), "Contents");
    if (!truncated || truncated->size() != 1 || !token || !contents) {
        return bad("no IsTruncated");
    }
    Page page;
    if (xml_text(truncated->front()) == "true") {
        page.next = token->empty() ? "" : xml_text(token->front());
        if (page.next.empty()) {
            return bad("truncated without a NextContinuationToken");
        }
    }
    for (std::string_view c : *contents) {
        const auto key = xml_elements(c, "Key");
        const auto modified = xml_elements(c, "LastModified");
        if (!key || key->size() != 1 || !modified || modified->size() != 1) {
            return bad("an object without one Key and LastModified");
        }
        const std::string k = xml_text(key->front());
        const auto when = parse_iso_time(xml_text(modified->front()));
        if (k.compare(0, prefix.size(), prefix) != 0 || !object_name(k.substr(prefix.size()))) {
            continue;  // not an object of this namespace
        }
        if (!when) {
            return bad("an unreadable LastModified for " + k);
        }
        page.objects.push_back({k.substr(prefix.size()), age_of(*when)});
    }
    return page;
}

}  // namespace

Result<std::vector<ListedObject>, Failure> s3_list(Backend& s3, const std::string& dir) {
    const std::string rest = dir.substr(std::min(dir.size(), kScheme.size()));
    const std::string bucket = rest.substr(0, rest.find('/'));
    const std::string prefix = bucket.size() < rest.size() ? rest.substr(bucket.size() + 1) : "";
    std::vector<ListedObject> out;
    std::string token;
    for (int page = 0; page < kMaxPages; ++page) {
        const std::string url =
            std::string(kScheme) + bucket + "/?" +
            (token.empty() ? "" : "continuation-token=" + query_escaped(token) + "&") +
            "list-type=2&prefix=" + query_escaped(prefix);
        auto r = s3.get(url);
        if (!r) {
            return fail(r.error());
        }
        auto parsed = parse_page(r->body, prefix, url);
        if (!parsed) {
            return fail(parsed.error());
        }
        out.insert(out.end(), parsed->objects.begin(), parsed->objects.end());
        if (parsed->next.empty()) {
            return out;
        }
        token = std::move(parsed->next);
    }
    return fail(listing_failure(RemoteErrc::corrupt,
                                "listing " + dir + ": more than " + std::to_string(kMaxPages) +
                                    " pages; the server keeps saying the listing is truncated"));
}

}  // namespace kcache::remote
