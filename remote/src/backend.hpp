#pragma once
// The remote backend seam: the four requests the client makes of an object
// store (get, head, put, remove), each answered by a reply or a typed
// failure. A backend moves bytes and nothing else; the envelope,
// verification, the breaker, sharding and the upload queue are the client's,
// shared by every backend. Backends are picked by URL scheme from the one
// table in backends.cpp ("adding a remote backend" in docs/design.md).
// Internal.

#include <atomic>
#include <chrono>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kcache/remote/remote.hpp"

namespace kcache::remote {

enum class Op { get, head, put, remove };

// A setting that cannot work (a backend's maker, the signing key): the client
// does not open, and the message says what to change.
inline Unexpected<RemoteError> config_error(std::string message) {
    return fail(RemoteError{RemoteErrc::config, std::move(message)});
}

// A request that succeeded.
struct Reply {
    long status = 0;    // the server's own code (an HTTP status); 0 for a backend without one
    store::Bytes body;  // get: the object; empty otherwise
};

// A request that failed. `error.code` is the type: not_found (no such
// object), http_status (any other refusal), timeout, unreachable, tls,
// redirects, too_large, transport.
struct Failure {
    RemoteError error;  // its message names the request and the URL
    long status = 0;    // the server's code when it answered; 0 when nothing came back
    std::chrono::seconds retry_after{0};  // how long the server asked to be left alone; 0 if not
};

// `scheme://host[:port]` of `url`, without credentials or path: what a
// message may name, and the default server of a URL.
std::string server_name(const std::string& url);

// One object of a listing (Backend::list): its name below the listed
// directory ("<2 hex>/<64 hex>"; other names are not objects) and how long
// ago it was written (Redis: last used).
struct ListedObject {
    std::string name;
    std::chrono::seconds age{0};
};

// One object of a put_many.
struct PutItem {
    std::string url;
    std::span<const std::uint8_t> object;
};

class Backend {
  public:
    virtual ~Backend() = default;
    // The server that answers for `url`, as the client's breakers tell
    // servers apart (a name without credentials): by default
    // `scheme://host[:port]` of the URL (server_name()).
    virtual std::string server_of(const std::string& url) { return server_name(url); }
    // get() of each of `urls`, the answers in the same order. The default
    // sends them one after another; a backend that can, pipelines them (Redis:
    // one round trip per server).
    virtual std::vector<Result<Reply, Failure>> get_many(const std::vector<std::string>& urls);
    // put() of each of `items`, the answers in the same order (see get_many).
    virtual std::vector<Result<Reply, Failure>> put_many(const std::vector<PutItem>& items);
    // The most requests the client hands get_many or put_many at once: 1
    // for a backend that sends them one after another, so that each passes
    // the breaker on its own (a server that fails is not asked again).
    virtual std::size_t batch_limit() const { return 1; }
    // The object at `url`, whole and within Settings::max_object_bytes.
    virtual Result<Reply, Failure> get(const std::string& url) = 0;
    // Whether the object at `url` is there: a reply, or not_found.
    virtual Result<Reply, Failure> head(const std::string& url) = 0;
    // Stores `object` at `url`, replacing what was there.
    virtual Result<Reply, Failure> put(const std::string& url,
                                       std::span<const std::uint8_t> object) = 0;
    // Deletes the object at `url`.
    virtual Result<Reply, Failure> remove(const std::string& url) = 0;
    // Does ahead of the first request what it would do first on its way to
    // the server(s) of the base URL `url` (connect, log in), on the client's
    // warm-up thread; sends no object request and counts nothing (the first
    // request tries again what failed here). False when a server could not
    // be reached (the client then makes no trial request of its own), or
    // once `stop` is set. By default nothing, and true.
    virtual bool warm_up(const std::string& url, const std::atomic<bool>& stop) {
        (void)url;
        (void)stop;
        return true;
    }
    // The objects below the directory `dir` (a base URL followed by a
    // namespace's directory, ending in '/'), each with its age, for `kcache
    // remote gc` (listing.hpp); a failure naming why when the server cannot
    // list (by default: this backend has no listing).
    virtual Result<std::vector<ListedObject>, Failure> list(const std::string& dir);
};

// Calls the request `op` of `backend` (`body` is put's object).
Result<Reply, Failure> request(Backend& backend, Op op, const std::string& url,
                               std::span<const std::uint8_t> body = {});

// The answer of a request that got one: its reply, or a refusal (a failure
// that came with a status) as a reply of that status and no body; nullopt
// when nothing came back (the failure's message says why). For the doctor.
std::optional<Reply> answered(const Result<Reply, Failure>& r);

class Credential;  // credential.hpp

// Makes a backend for the settings' URLs of its schemes; `credential` gives
// the bearer token (Settings::token_file or token_command; none configured:
// no token); a config error when the settings do not describe a usable
// store (a bad bucket name, no credentials).
using MakeBackend = Result<std::unique_ptr<Backend>, RemoteError> (*)(
    const Settings& settings, const std::shared_ptr<Credential>& credential);

// The backends of one client: one per row of the table that its base URLs
// use (rows sharing a maker share one backend: http and https).
class Backends {
  public:
    // Makes the backends of the settings' URLs, which have supported schemes
    // and their attributes split off (split_base_urls); the first maker's
    // error otherwise. `settings` outlives this.
    Status<RemoteError> open(const Settings& settings,
                             const std::shared_ptr<Credential>& credential);
    // The backend for `url`, whose scheme is one of the base URLs' (after open).
    Backend& of(const std::string& url);

  private:
    std::vector<std::pair<MakeBackend, std::unique_ptr<Backend>>> made_;
};

// Checks each base URL of `settings` (check_base_url) and moves its
// attributes, the text after '?', into Settings::url_attributes: the client
// builds object URLs from the base URLs without them. The first URL's error
// otherwise.
Status<RemoteError> split_base_urls(Settings& settings);

// A base URL's attributes by name, values percent-decoded.
using Attributes = std::map<std::string, std::string>;

// The attributes `text` ("name=value&…") of the base URL `url`: a config
// error naming `url` for an item without '=', a bad %-escape, a name not in
// `known` (the message lists them) or a name given twice.
Result<Attributes, RemoteError> parse_attributes(const std::string& url, const std::string& text,
                                                 std::initializer_list<std::string_view> known);

// Checks the attributes `attributes` of the base URL `url` (without them)
// for a backend that reads some: a config error for one it does not take or
// a value it cannot use. The column of the backend table (backends.cpp).
using CheckAttributes = Status<RemoteError> (*)(const std::string& url,
                                                const std::string& attributes);

// The backend of the scheme of `settings`' first base URL, made by its row
// of the table (backends.cpp), where each backend's maker is declared.
Result<std::unique_ptr<Backend>, RemoteError> make_backend(
    const Settings& settings, const std::shared_ptr<Credential>& credential);

}  // namespace kcache::remote
