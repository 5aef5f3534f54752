// The HTTP(S) backend: each request is one libcurl request (http.cpp), and
// its status decides the reply: 200 for get and head, 200/201/204 for put,
// 200/204 for remove; 404 is not_found, any other status an http_status
// failure that keeps the status and Retry-After for the breaker.
//
// A strict WebDAV server answers a PUT into a collection that does not
// exist with 409 (Apache mod_dav) or 404 (rclone serve webdav) and creates
// nothing. Then the object's parent collections are made with MKCOL, top
// down (201, or 405 "already there": another writer may have made it
// meanwhile; rclone answers 201 for one that exists; a MKCOL refused
// otherwise is sent once more, as one that lost that race can be), and the
// PUT is tried once more. nginx without create_full_put_path answers such a
// PUT 500 (its rename into the missing directory fails): a PUT answered 500
// into collections not known to exist makes them too, and is sent again
// only when a MKCOL made one (201); otherwise the 500 was the server's own.
// Collections known to exist are remembered for the process, so a new
// `<2 hex>/` costs one MKCOL and an upload into a known one a single PUT.
// Servers that make the path themselves (nginx with create_full_put_path)
// never see a MKCOL.

#include <algorithm>
#include <initializer_list>
#include <mutex>
#include <set>

#include "backend.hpp"
#include "http.hpp"
#include "listing.hpp"

namespace kcache::remote {
namespace {

// The URLs of the collections above `url`, top down, each ending in '/':
// for http://h/a/b/key, http://h/a/ and http://h/a/b/ (never the root).
std::vector<std::string> parents_of(const std::string& url) {
    std::vector<std::string> out;
    const auto scheme_end = url.find("://");
    const auto root = url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
    if (root == std::string::npos) {
        return out;
    }
    for (auto slash = url.find('/', root + 1); slash != std::string::npos;
         slash = url.find('/', slash + 1)) {
        out.push_back(url.substr(0, slash + 1));
    }
    return out;
}

class HttpBackend final : public Backend {
  public:
    HttpBackend(const Settings& settings, std::shared_ptr<Credential> credential)
        : http_(settings, std::move(credential)) {}

    Result<Reply, Failure> get(const std::string& url) override {
        return send(Method::get, url, {}, {200});
    }
    Result<Reply, Failure> head(const std::string& url) override {
        return send(Method::head, url, {}, {200});
    }
    Result<Reply, Failure> put(const std::string& url,
                               std::span<const std::uint8_t> object) override {
        auto r = send(Method::put, url, object, {200, 201, 204});
        const bool maybe = !r && r.error().status == 500;  // nginx: see the top of this file
        if (r || !(missing_collection(r.error()) || maybe)) {
            return r;
        }
        auto made = make_parents(url, r.error());
        if (!made) {
            return fail(made.error());
        }
        if (maybe && *made == 0) {
            Failure f = r.error();
            f.error.message += " (MKCOL of its collections made none: not a missing collection)";
            return fail(std::move(f));
        }
        r = send(Method::put, url, object, {200, 201, 204});
        if (!r && missing_collection(r.error())) {
            forget_parents(url);  // gone from the server since: made again next time
            Failure f = r.error();
            f.error.message +=
                " again after MKCOL of its collections: the server makes neither the path for "
                "a PUT nor the collections asked for (enable MKCOL, or nginx's "
                "create_full_put_path)";
            return fail(std::move(f));
        }
        return r;
    }
    Result<Reply, Failure> remove(const std::string& url) override {
        return send(Method::del, url, {}, {200, 204});
    }
    bool warm_up(const std::string& url, const std::atomic<bool>& stop) override {
        return http_.preconnect(url, stop);
    }
    Result<std::vector<ListedObject>, Failure> list(const std::string& dir) override {
        return webdav_list(http_, dir);  // webdav_list.cpp
    }

  private:
    // A PUT's answer when the collection it goes into does not exist.
    static bool missing_collection(const Failure& f) { return f.status == 409 || f.status == 404; }

    // One request; a reply when its status is one of `ok`.
    Result<Reply, Failure> send(Method m, const std::string& url,
                                std::span<const std::uint8_t> body,
                                std::initializer_list<long> ok) {
        return reply_of(m, url, http_.perform(m, url, body), ok);
    }

    // Makes the collections above `url` that are not known to exist; how
    // many a MKCOL made (201), or the failure of the first MKCOL refused,
    // after `conflict` (the PUT's 409).
    Result<std::size_t, Failure> make_parents(const std::string& url, const Failure& conflict) {
        std::size_t created = 0;
        for (const std::string& dir : parents_of(url)) {
            if (known(dir)) {
                continue;
            }
            auto made = send(Method::mkcol, dir, {}, {201, 405});
            if (!made && made.error().status != 0) {
                // A MKCOL that lost a race with another writer's may be
                // refused although the collection is there (Apache mod_dav
                // answers 403 when the directory appears between its check
                // and its mkdir); asked again, the server answers 405.
                made = send(Method::mkcol, dir, {}, {201, 405});
            }
            if (!made) {
                Failure f = made.error();
                f.error.message = conflict.error.message +
                                  " (a missing collection); creating it: " + f.error.message;
                return fail(std::move(f));
            }
            created += made->status == 201 ? 1 : 0;
            std::lock_guard g(mu_);
            collections_.insert(dir);
        }
        return created;
    }

    bool known(const std::string& dir) {
        std::lock_guard g(mu_);
        return collections_.count(dir) != 0;
    }

    void forget_parents(const std::string& url) {
        std::lock_guard g(mu_);
        for (const std::string& dir : parents_of(url)) {
            collections_.erase(dir);
        }
    }

    Http http_;
    std::mutex mu_;                      // guards collections_
    std::set<std::string> collections_;  // URLs (ending in '/') known to exist
};

}  // namespace

Result<Reply, Failure> reply_of(Method m, const std::string& url, Result<Response, RemoteError> r,
                                std::initializer_list<long> ok) {
    if (!r) {
        return fail(Failure{r.error()});
    }
    if (std::find(ok.begin(), ok.end(), r->status) != ok.end()) {
        return Reply{r->status, std::move(r->body)};
    }
    const RemoteErrc code = r->status == 404 ? RemoteErrc::not_found : RemoteErrc::http_status;
    return fail(Failure{RemoteError{code, std::string(method_name(m)) + " " + url + ": HTTP " +
                                              std::to_string(r->status)},
                        r->status, r->retry_after});
}

Result<std::unique_ptr<Backend>, RemoteError> make_http(
    const Settings& settings, const std::shared_ptr<Credential>& credential) {
    return std::unique_ptr<Backend>(std::make_unique<HttpBackend>(settings, credential));
}

}  // namespace kcache::remote
