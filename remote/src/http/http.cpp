#include "http.hpp"

#include <sys/socket.h>
#include <unistd.h>

namespace kcache::remote {
namespace {

constexpr std::size_t kIdleHandles = 8;

struct Sink {
    store::Bytes* body;
    std::uint64_t cap;
    bool over = false;
};

std::size_t on_data(char* data, std::size_t size, std::size_t n, void* user) {
    auto* sink = static_cast<Sink*>(user);
    const std::size_t len = size * n;
    if (sink->body->size() + len > sink->cap) {
        sink->over = true;
        return 0;  // aborts the transfer: CURLE_WRITE_ERROR
    }
    sink->body->insert(sink->body->end(), data, data + len);
    return len;
}

RemoteErrc classify(CURLcode rc) {
    switch (rc) {
        case CURLE_OPERATION_TIMEDOUT:
            return RemoteErrc::timeout;
        case CURLE_COULDNT_CONNECT:
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
        case CURLE_GOT_NOTHING:
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
            return RemoteErrc::unreachable;
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_CERTPROBLEM:
            return RemoteErrc::tls;
        case CURLE_TOO_MANY_REDIRECTS:
            return RemoteErrc::redirects;
        case CURLE_FILESIZE_EXCEEDED:
            return RemoteErrc::too_large;
        default:
            return RemoteErrc::transport;
    }
}

}  // namespace

const char* method_name(Method m) {
    switch (m) {
        case Method::get:
            return "GET";
        case Method::head:
            return "HEAD";
        case Method::put:
            return "PUT";
        case Method::del:
            return "DELETE";
        case Method::mkcol:
            return "MKCOL";
        case Method::propfind:
            return "PROPFIND";
    }
    return "?";
}

Http::Http(const Settings& settings, std::shared_ptr<Credential> credential)
    : settings_(settings), credential_(std::move(credential)) {}

Http::~Http() {
    std::lock_guard g(mu_);
    drop_if_forked();
}

void Http::drop_if_forked() {
    if (idle_owner_ == ::getpid()) {
        return;
    }
    // A forked child's copies of its parent's handles and their connections:
    // never used, and not cleaned up either (that would close, or for TLS
    // shut down, the parent's connections).
    for (EasyHandle& h : idle_) {
        (void)h.release();
    }
    idle_.clear();
    idle_owner_ = ::getpid();
}

EasyHandle Http::take() {
    const CurlApi* curl = curl_api();
    if (curl == nullptr) {
        return nullptr;
    }
    {
        std::lock_guard g(mu_);
        drop_if_forked();
        if (!idle_.empty()) {
            EasyHandle h = std::move(idle_.back());
            idle_.pop_back();
            curl->easy_reset(h.get());  // keeps the connection cache
            return h;
        }
    }
    return EasyHandle(curl->easy_init());
}

void Http::give_back(EasyHandle h) {
    std::lock_guard g(mu_);
    drop_if_forked();
    if (idle_.size() < kIdleHandles) {
        idle_.push_back(std::move(h));
    }
}

void apply_sigv4(CURL* handle, const SigV4& sig) {
    const CurlApi& curl = *curl_api();
    const std::string scope = "aws:amz:" + sig.region + ":" + sig.service;
    curl.easy_setopt(handle, CURLOPT_AWS_SIGV4, scope.c_str());  // copied by libcurl
    curl.easy_setopt(handle, CURLOPT_USERNAME, sig.access_key_id.c_str());
    curl.easy_setopt(handle, CURLOPT_PASSWORD, sig.secret.c_str());
}

Slist Http::headers(Method method, const RequestAuth& auth, const std::string& token) const {
    const CurlApi& curl = *curl_api();
    curl_slist* list = nullptr;
    if (!token.empty()) {
        list = curl.slist_append(list, ("Authorization: Bearer " + token).c_str());
    }
    for (const std::string& h : auth.headers) {
        list = curl.slist_append(list, h.c_str());
    }
    if (method == Method::put) {
        list = curl.slist_append(list, "Content-Type: application/octet-stream");
        // No 100-continue round trip. Not under SigV4: libcurl signs every
        // header it is given, this empty one too, which is then not sent.
        if (auth.sigv4 == nullptr) {
            list = curl.slist_append(list, "Expect:");
        }
    }
    return Slist(list);
}

// A parked connection offered to one request (preconnect.hpp): libcurl asks
// open_socket for a socket to each address it tries, and socket_options
// whether that one is connected already.
struct Http::Handoff {
    ParkedSockets* parked = nullptr;     // nullptr: libcurl opens its own
    curl_socket_t fd = CURL_SOCKET_BAD;  // the parked socket it was given
};

namespace {

curl_socket_t open_socket(void* user, curlsocktype purpose, curl_sockaddr* a) {
    auto* h = static_cast<Http::Handoff*>(user);
    if (purpose == CURLSOCKTYPE_IPCXN && h->parked != nullptr && h->fd == CURL_SOCKET_BAD) {
        const int fd = h->parked->take(&a->addr, a->addrlen);
        if (fd >= 0) {
            h->fd = fd;
            return fd;
        }
    }
    return ::socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

int socket_options(void* user, curl_socket_t fd, curlsocktype) {
    const auto* h = static_cast<const Http::Handoff*>(user);
    return fd == h->fd ? CURL_SOCKOPT_ALREADY_CONNECTED : CURL_SOCKOPT_OK;
}

// What a request whose connection was opened ahead gets when the server
// closed that connection as the request went out.
bool lost_connection(CURLcode rc) {
    return rc == CURLE_GOT_NOTHING || rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR;
}

// Sets the URL, method, body, limits and redirects of one request on `c`.
void set_transfer(CURL* c, const Settings& s, bool https_only, Method method,
                  const std::string& url, std::span<const std::uint8_t> body) {
    const CurlApi& curl = *curl_api();
    curl.easy_setopt(c, CURLOPT_URL, url.c_str());
    curl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, https_only ? "https" : "http,https");
    curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl.easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(s.timeout.count()));
    curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(s.connect_timeout.count()));
    if (method != Method::head) {
        // A HEAD's Content-Length is the size of a body it does not send: the
        // cap is for bodies received, and a large object must not fail a HEAD.
        curl.easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(s.max_object_bytes));
    }
    if (!s.ca_file.empty()) {
        curl.easy_setopt(c, CURLOPT_CAINFO, s.ca_file.c_str());
    }
    if (method == Method::get || method == Method::head) {
        // Reads may follow a few redirects (to the same schemes); writes never do.
        curl.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
        curl.easy_setopt(c, CURLOPT_MAXREDIRS, s.max_redirects);
        curl.easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, https_only ? "https" : "http,https");
        curl.easy_setopt(c, CURLOPT_UNRESTRICTED_AUTH, 0L);
    }
    if (method == Method::head) {
        curl.easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (method == Method::put) {
        curl.easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
        curl.easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
        curl.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    } else if (method == Method::del || method == Method::mkcol || method == Method::propfind) {
        curl.easy_setopt(c, CURLOPT_CUSTOMREQUEST, method_name(method));
    }
}

}  // namespace

bool Http::preconnect(const std::string& url, const std::atomic<bool>& stop) {
    return parked_.connect(url, settings_.connect_timeout, stop);
}

Result<Response, RemoteError> Http::perform(Method method, const std::string& url,
                                            std::span<const std::uint8_t> body,
                                            const RequestAuth& auth) {
    const bool bearer = auth.sigv4 == nullptr && credential_ && credential_->configured();
    if (!bearer) {
        return perform_as(method, url, body, auth, "");
    }
    auto token = credential_->current();
    if (!token) {
        return fail(RemoteError{token.error().code, std::string(method_name(method)) + " " + url +
                                                        ": " + token.error().message});
    }
    auto r = perform_as(method, url, body, auth, *token);
    if (r && (r->status == 401 || r->status == 403) && credential_->refresh(*token)) {
        if (auto rotated = credential_->current()) {
            return perform_as(method, url, body, auth, *rotated);
        }
    }
    return r;
}

Result<Response, RemoteError> Http::perform_as(Method method, const std::string& url,
                                               std::span<const std::uint8_t> body,
                                               const RequestAuth& auth, const std::string& token) {
    Handoff handoff{parked_.any() ? &parked_ : nullptr};
    CURLcode rc = CURLE_OK;
    auto r = perform_once(method, url, body, auth, token, handoff, rc);
    if (!r && handoff.fd != CURL_SOCKET_BAD && lost_connection(rc)) {
        // The server closed the connection opened ahead just as the request
        // went out (an idle limit): not a failure of the server. Once more,
        // on a connection of the request's own.
        Handoff none;
        return perform_once(method, url, body, auth, token, none, rc);
    }
    return r;
}

Result<Response, RemoteError> Http::perform_once(Method method, const std::string& url,
                                                 std::span<const std::uint8_t> body,
                                                 const RequestAuth& auth, const std::string& token,
                                                 Handoff& handoff, CURLcode& rc) {
    EasyHandle h = take();
    if (!h) {
        std::string why = "curl_easy_init failed";
        curl_api(&why);  // or libcurl could not be loaded
        return fail(RemoteError{RemoteErrc::transport, why});
    }
    const CurlApi& curl = *curl_api();
    CURL* c = h.get();
    Response resp;
    Sink sink{&resp.body, settings_.max_object_bytes};
    const bool https_only = !token.empty() && settings_.plain_http_token == PlainHttpToken::refuse;
    Slist hdrs = headers(method, auth, token);
    set_transfer(c, settings_, https_only, method, url, body);
    curl.easy_setopt(c, CURLOPT_HTTPHEADER, hdrs.get());
    curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl.easy_setopt(c, CURLOPT_WRITEDATA, &sink);
    if (handoff.parked != nullptr) {
        curl.easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket);
        curl.easy_setopt(c, CURLOPT_OPENSOCKETDATA, &handoff);
        curl.easy_setopt(c, CURLOPT_SOCKOPTFUNCTION, socket_options);
        curl.easy_setopt(c, CURLOPT_SOCKOPTDATA, &handoff);
    }
    if (auth.sigv4 != nullptr) {
        apply_sigv4(c, *auth.sigv4);
    } else if (settings_.netrc) {
        curl.easy_setopt(c, CURLOPT_NETRC, static_cast<long>(CURL_NETRC_OPTIONAL));
    }
    rc = curl.easy_perform(c);
    curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp.status);
    curl_off_t retry_after = 0;  // seconds; both of the header's forms, 0 without one
    if (curl.easy_getinfo(c, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK && retry_after > 0) {
        resp.retry_after = std::chrono::seconds(retry_after);
    }
    curl.easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);  // `hdrs` dies before the handle
    give_back(std::move(h));  // the next request resets its options (`handoff` dies too)
    if (rc != CURLE_OK) {
        const RemoteErrc code = sink.over ? RemoteErrc::too_large : classify(rc);
        return fail(RemoteError{
            code, std::string(method_name(method)) + " " + url + ": " +
                      (sink.over ? "object over the size cap" : curl.easy_strerror(rc))});
    }
    return resp;
}

}  // namespace kcache::remote
