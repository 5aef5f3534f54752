// The WebDAV listing of a namespace (listing.hpp): PROPFIND with Depth: 1
// and no body (allprop: every server answers getlastmodified and
// resourcetype to it) of the namespace's directory, then of each
// "<2 hex>/" collection in it. The answer is a 207 multistatus:
//
//   multistatus := <multistatus> response* </multistatus>
//   response    := <response> <href>path</href> … <getlastmodified>HTTP date</getlastmodified>
//                  … [<resourcetype><collection/></resourcetype>] … </response>
//
// (any namespace prefix). Only an entry's last path segment is read, and only
// a name of the layout counts; the URLs gc removes are made from the listed
// directory and those names, never taken from the server's hrefs.

#include <string>

#include "http.hpp"
#include "listing.hpp"

namespace kcache::remote {
namespace {

// One entry of a multistatus: the last segment of its href, and its time.
struct DavEntry {
    std::string name;
    bool collection = false;
    std::optional<std::time_t> modified;
};

constexpr const char* kNoPropfind =
    ": the server cannot list collections (nginx's own dav module has no PROPFIND: load "
    "the dav-ext module, Debian's libnginx-mod-http-dav-ext, with dav_ext_methods PROPFIND)";

// The last segment of `href` ("/a/kcache/ns/x/v1/ab/" → "ab").
std::string last_segment(std::string href) {
    while (!href.empty() && href.back() == '/') {
        href.pop_back();
    }
    return href.substr(href.rfind('/') == std::string::npos ? 0 : href.rfind('/') + 1);
}

// The entries of the multistatus `body`, the answer to PROPFIND `url`; a
// failure naming the URL when it is not a whole multistatus document.
Result<std::vector<DavEntry>, Failure> parse_multistatus(const store::Bytes& body,
                                                         const std::string& url) {
    const std::string_view xml(reinterpret_cast<const char*>(body.data()), body.size());
    auto bad = [&](const std::string& why) {
        return fail(listing_failure(RemoteErrc::corrupt,
                                    "PROPFIND " + url + ": not a WebDAV listing (" + why + ")"));
    };
    const auto root = xml_elements(xml, "multistatus");
    if (!root || root->size() != 1) {
        return bad(root ? "no multistatus element" : "cut off: an element is not closed");
    }
    const auto responses = xml_elements(root->front(), "response");
    if (!responses) {
        return bad("cut off: a response is not closed");
    }
    std::vector<DavEntry> out;
    for (std::string_view r : *responses) {
        const auto href = xml_elements(r, "href");
        const auto modified = xml_elements(r, "getlastmodified");
        const auto collection = xml_elements(r, "collection");
        if (!href || href->size() != 1 || !modified || !collection) {
            return bad("a response without one href");
        }
        DavEntry e{last_segment(xml_text(href->front())), !collection->empty(), std::nullopt};
        if (!modified->empty()) {
            e.modified = parse_http_date(xml_text(modified->front()));
        }
        out.push_back(std::move(e));
    }
    return out;
}

// PROPFIND (Depth: 1) of the collection `url`; an empty listing for a 404.
Result<std::vector<DavEntry>, Failure> propfind(Http& http, const std::string& url) {
    RequestAuth depth;
    depth.headers.push_back("Depth: 1");
    auto r = reply_of(Method::propfind, url, http.perform(Method::propfind, url, {}, depth), {207});
    if (!r && r.error().error.code == RemoteErrc::not_found) {
        return std::vector<DavEntry>{};
    }
    if (!r) {
        Failure f = r.error();
        if (f.status == 405 || f.status == 501) {
            f.error.message += kNoPropfind;
        }
        return fail(std::move(f));
    }
    return parse_multistatus(r->body, url);
}

}  // namespace

Result<std::vector<ListedObject>, Failure> webdav_list(Http& http, const std::string& dir) {
    auto top = propfind(http, dir);
    if (!top) {
        return fail(top.error());
    }
    std::vector<ListedObject> out;
    for (const DavEntry& shard : *top) {
        if (!shard.collection || !shard_name(shard.name)) {
            continue;
        }
        const std::string url = dir + shard.name + "/";
        auto objects = propfind(http, url);
        if (!objects) {
            return fail(objects.error());
        }
        for (const DavEntry& e : *objects) {
            const std::string name = shard.name + "/" + e.name;
            if (e.collection || !object_name(name)) {
                continue;
            }
            if (!e.modified) {
                return fail(listing_failure(
                    RemoteErrc::corrupt,
                    "PROPFIND " + url + ": no readable getlastmodified for " + e.name));
            }
            out.push_back({name, age_of(*e.modified)});
        }
    }
    return out;
}

}  // namespace kcache::remote
