// The remote client's requests: checked settings, downloads verified through
// the envelope, HEAD, PUT, and the doctor's probe. Every outcome is counted.

#include <unistd.h>

#include "client_impl.hpp"
#include "kcache/common/log.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/remote/envelope.hpp"
#include "kcache/store/key.hpp"

namespace kcache::remote {
namespace {

// `scheme://host[:port]` of `url`, without credentials or path: what a
// message may name.
std::string server_of(const std::string& url) {
    const auto scheme_end = url.find("://");
    const std::size_t host_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
    const std::size_t host_end = std::min(url.find('/', host_start), url.size());
    std::string host = url.substr(host_start, host_end - host_start);
    if (const auto at = host.rfind('@'); at != std::string::npos) {
        host.erase(0, at + 1);
    }
    return url.substr(0, host_start) + host;
}

Unexpected<RemoteError> error(RemoteErrc code, std::string message) {
    return fail(RemoteError{code, std::move(message)});
}

bool starts_with(const std::string& s, std::string_view prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

// The longest token file read: a bearer token is a line, not a document.
constexpr std::size_t kMaxTokenFileBytes = 64 * 1024;

// The token from `file` (first line, surrounding whitespace dropped), read
// through the bounded reader: a FIFO or a device is refused without waiting.
Result<std::string, RemoteError> read_token(const std::filesystem::path& file) {
    if (file.empty()) {
        return std::string();
    }
    auto text = read_regular_file(file, kMaxTokenFileBytes);
    if (!text) {
        return error(RemoteErrc::config, "cannot read the token file: " + text.error().message);
    }
    std::string token = text->substr(0, text->find('\n'));
    const auto b = token.find_first_not_of(" \t\r");
    const auto e = token.find_last_not_of(" \t\r");
    token = b == std::string::npos ? "" : token.substr(b, e - b + 1);
    if (token.empty() || token.find('\r') != std::string::npos) {
        return error(RemoteErrc::config, "the token file " + file.string() + " holds no token");
    }
    return token;
}

RemoteError status_error(Method m, const std::string& url, long status) {
    const char* what = m == Method::put ? "PUT " : m == Method::head ? "HEAD " : "GET ";
    return {status == 404 ? RemoteErrc::not_found : RemoteErrc::http_status,
            std::string(what) + url + ": HTTP " + std::to_string(status)};
}

}  // namespace

Client::Impl::Impl(Settings s, std::string token)
    : settings(std::move(s)),
      http(settings, std::move(token)),
      breaker(settings.state_dir, settings.breaker_window, settings.timeout) {}

Result<std::unique_ptr<Client>, RemoteError> Client::open(Settings settings) {
    if (settings.base_urls.empty()) {
        return error(RemoteErrc::config, "no remote URL");
    }
    bool plain = false;
    for (const std::string& url : settings.base_urls) {
        if (!starts_with(url, "http://") && !starts_with(url, "https://")) {
            return error(RemoteErrc::config,
                         "remote URL " + url + " is neither http:// nor https://");
        }
        plain = plain || starts_with(url, "http://");
    }
    auto token = read_token(settings.token_file);
    if (!token) {
        return fail(token.error());
    }
    if (!token->empty() && plain && settings.plain_http_token == PlainHttpToken::refuse) {
        return error(RemoteErrc::config,
                     "a bearer token is never sent over plain http: use https:// URLs, or "
                     "allow it explicitly (KCACHE_REMOTE_ALLOW_HTTP_TOKEN=1)");
    }
    auto impl = std::make_unique<Impl>(std::move(settings), std::move(*token));
    return std::unique_ptr<Client>(new Client(std::move(impl)));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Client::~Client() {
    impl_->stop_worker(2 * impl_->settings.timeout);
    (void)add_to_stats_file(impl_->settings.state_dir, counters());
}

Result<Response, RemoteError> Client::Impl::send(Method method, const std::string& url,
                                                 std::span<const std::uint8_t> body) {
    Breaker::Ticket ticket = breaker.allow();
    if (!ticket.allowed) {
        return error(RemoteErrc::breaker_open, ticket.why_not);
    }
    auto r = http.perform(method, url, body);
    const long status = r ? r->status : 0;
    const RemoteErrc code = r ? RemoteErrc::http_status : r.error().code;
    if ((!r || status >= 500) && trips_breaker(code, status)) {
        const std::string why = r ? "HTTP " + std::to_string(status) : r.error().message;
        breaker.failed(ticket, why);
        logging::warning("remote server " + server_of(url) + " is down (" + why +
                         "): skipped by this node for " +
                         std::to_string(settings.breaker_window.count()) + " ms");
    } else {
        breaker.succeeded(ticket);
    }
    return r;
}

void Client::Impl::count_error(const RemoteError& e) {
    switch (e.code) {
        case RemoteErrc::timeout:
            counters.timeouts++;
            break;
        case RemoteErrc::corrupt:
        case RemoteErrc::wrong_key:
        case RemoteErrc::too_large:
            counters.corrupt++;
            break;
        case RemoteErrc::not_found:
        case RemoteErrc::breaker_open:
        case RemoteErrc::read_only:
            break;
        default:
            counters.errors++;
    }
}

Result<Fetched, RemoteError> Client::fetch(const store::KeyFields& fields) {
    const store::Key key = store::make_key(fields);
    const std::string url = object_url(key);
    auto r = impl_->send(Method::get, url);
    Result<Fetched, RemoteError> out = error(RemoteErrc::transport, "");
    if (!r) {
        out = fail(r.error());
    } else if (r->status != 200) {
        out = fail(status_error(Method::get, url, r->status));
    } else if (auto env = decode_envelope(r->body, key, impl_->settings.max_object_bytes); !env) {
        const RemoteErrc code = env.error().code == EnvelopeErrc::wrong_key ? RemoteErrc::wrong_key
                                : env.error().code == EnvelopeErrc::too_large
                                    ? RemoteErrc::too_large
                                    : RemoteErrc::corrupt;
        out = error(code, url + ": " + env.error().message);
    } else {
        impl_->counters.hits++;
        return Fetched{std::move(env->fields), std::move(env->provenance), std::move(env->bytes)};
    }
    impl_->counters.misses++;
    impl_->count_error(out.error());
    return out;
}

Result<bool, RemoteError> Client::exists(const store::Key& key) {
    const std::string url = object_url(key);
    auto r = impl_->send(Method::head, url);
    if (r && (r->status == 200 || r->status == 404)) {
        return r->status == 200;
    }
    RemoteError e = r ? status_error(Method::head, url, r->status) : r.error();
    impl_->count_error(e);
    return fail(std::move(e));
}

Status<RemoteError> Client::upload(const store::KeyFields& fields,
                                   std::span<const std::uint8_t> bytes,
                                   const store::Provenance& provenance) {
    return impl_->upload_one(fields, bytes, provenance);
}

Status<RemoteError> Client::Impl::upload_one(const store::KeyFields& fields,
                                             std::span<const std::uint8_t> bytes,
                                             const store::Provenance& provenance) {
    const store::Key key = store::make_key(fields);
    if (settings.access == Access::read_only) {
        return error(RemoteErrc::read_only, "read-only remote: nothing uploaded");
    }
    const store::Bytes object = encode_envelope(fields, bytes, provenance);
    if (object.size() > settings.max_object_bytes) {
        counters.upload_failures++;
        return error(RemoteErrc::too_large, "object of " + std::to_string(object.size()) +
                                                " bytes over the size cap; not uploaded");
    }
    const std::string url = url_of(settings, key);
    auto r = send(Method::put, url, object);
    if (r && (r->status == 200 || r->status == 201 || r->status == 204)) {
        counters.uploads++;
        return Ok{};
    }
    counters.upload_failures++;
    RemoteError e = r ? status_error(Method::put, url, r->status) : r.error();
    if (e.code == RemoteErrc::timeout) {
        counters.timeouts++;
    }
    return fail(std::move(e));
}

std::vector<ProbeLine> Client::probe() {
    store::Key key;
    const std::string id = "kcache doctor probe " + std::to_string(::getpid());
    (void)key.parse_hex(kcache::sha256_hex(id));
    const std::string url = object_url(key);
    std::vector<ProbeLine> out;
    auto line = [&](const char* what, Method m, std::span<const std::uint8_t> body,
                    std::initializer_list<long> good) {
        auto r = impl_->http.perform(m, url, body);
        ProbeLine l{what, false, ""};
        if (!r) {
            l.detail = r.error().message;
        } else {
            l.ok = std::find(good.begin(), good.end(), r->status) != good.end();
            l.detail = std::string(what) + " " + url + ": HTTP " + std::to_string(r->status);
        }
        out.push_back(std::move(l));
        return out.back().ok;
    };
    line("GET", Method::get, {}, {200, 404});
    line("HEAD", Method::head, {}, {200, 404});
    if (impl_->settings.access == Access::read_write) {
        const std::string body = "kcache probe object; safe to delete\n";
        const auto* p = reinterpret_cast<const std::uint8_t*>(body.data());
        if (line("PUT", Method::put, std::span(p, body.size()), {200, 201, 204})) {
            line("DELETE", Method::del, {}, {200, 204});
        }
    }
    return out;
}

Counters Client::counters() const {
    const AtomicCounters& a = impl_->counters;
    return {a.hits, a.misses, a.errors, a.timeouts, a.corrupt, a.uploads, a.upload_failures};
}

const Settings& Client::settings() const {
    return impl_->settings;
}

}  // namespace kcache::remote
