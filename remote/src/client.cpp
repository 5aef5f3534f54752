// The remote client's requests: checked settings, the warm-up, downloads
// verified through the envelope, HEAD and PUT (the doctor's probe is in
// probe.cpp). Every outcome is counted.

#include <unistd.h>

#include <system_error>

#include "client_impl.hpp"
#include "credential.hpp"
#include "kcache/common/log.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/remote/envelope.hpp"
#include "kcache/sign/signature.hpp"
#include "kcache/store/key.hpp"

namespace kcache::remote {
namespace {

// The longest a Retry-After keeps the node away (the breaker window's own limit).
constexpr std::chrono::milliseconds kMaxRetryAfter = std::chrono::hours(1);

Unexpected<RemoteError> error(RemoteErrc code, std::string message) {
    return fail(RemoteError{code, std::move(message)});
}

bool starts_with(const std::string& s, std::string_view prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

Client::Impl::Impl(Settings s)
    : settings(std::move(s)),
      breakers(settings.state_dir, settings.breaker_window, settings.timeout),
      ns(namespace_states(settings)) {}

Result<std::unique_ptr<Client>, RemoteError> Client::open(Settings settings) {
    if (settings.base_urls.empty()) {
        return error(RemoteErrc::config, "no remote URL");
    }
    if (auto urls = split_base_urls(settings); !urls) {
        return fail(urls.error());
    }
    if (auto names = check_namespaces(settings); !names) {
        return fail(names.error());
    }
    bool plain = false;
    for (const std::string& url : settings.base_urls) {
        plain = plain || starts_with(url, "http://");
    }
    auto credential = Credential::open(settings);
    if (!credential) {
        return fail(credential.error());
    }
    // libcurl reads the CA file itself, as given: a FIFO would block it.
    if (!settings.ca_file.empty()) {
        if (auto ca = open_regular_file(settings.ca_file); !ca) {
            return error(RemoteErrc::config,
                         "the CA file (KCACHE_REMOTE_CA) is unusable: " + ca.error().message);
        }
    }
    auto signing_key = load_signing_key(settings);
    if (auto creds = check_url_credentials(settings); !creds || !signing_key) {
        return fail(!creds ? creds.error() : signing_key.error());
    }
    if ((*credential)->configured() && plain &&
        settings.plain_http_token == PlainHttpToken::refuse) {
        return error(RemoteErrc::config,
                     "a bearer token is never sent over plain http: use https:// URLs, or "
                     "allow it explicitly (KCACHE_REMOTE_ALLOW_HTTP_TOKEN=1)");
    }
    auto impl = std::make_unique<Impl>(std::move(settings));
    if (auto opened = impl->backends.open(impl->settings, *credential); !opened) {
        return fail(opened.error());
    }
    impl->signing_key = std::move(*signing_key);
    if (impl->signing_key || !impl->settings.trusted_keys.keys().empty() ||
        !impl->settings.trusted_builders.keys().empty()) {
        try {
            impl->warming = std::thread([] { (void)store::warm_up_signature_checks(); });
        } catch (const std::system_error&) {
            // No thread: the first check sets OpenSSL up itself.
        }
    }
    return std::unique_ptr<Client>(new Client(std::move(impl)));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Client::~Client() {
    impl_->closing = true;
    if (impl_->warm_up_thread && impl_->warm_up_owner == ::getpid()) {
        impl_->warm_up_thread->join();
    } else {
        (void)impl_->warm_up_thread.release();  // a forked child's copy of its parent's thread
    }
    if (impl_->warming.joinable()) {
        impl_->warming.join();
    }
    impl_->stop_worker(2 * impl_->settings.timeout);
    (void)add_to_stats_file(impl_->settings.state_dir, counters(), namespace_counters());
}

Result<Reply, Failure> Client::Impl::send(Op op, const std::string& url,
                                          std::span<const std::uint8_t> body) {
    Backend& backend = backends.of(url);
    const std::string server = backend.server_of(url);
    Breaker& breaker = breakers.of(server);
    Breaker::Ticket ticket = breaker.allow();
    if (!ticket.allowed) {
        return fail(Failure{RemoteError{RemoteErrc::breaker_open, server + ": " + ticket.why_not}});
    }
    auto r = request(backend, op, url, body);
    judge(breaker, ticket, server, {&r, 1});
    return r;
}

void Client::Impl::judge(Breaker& breaker, Breaker::Ticket& ticket, const std::string& server,
                         std::span<const Result<Reply, Failure>> answers) {
    for (const Result<Reply, Failure>& r : answers) {
        // A server that answered has a status (a refusal with its code and
        // Retry-After); a failure without one is the transport's.
        const long status = r ? r->status : r.error().status;
        const RemoteErrc code = status != 0 ? RemoteErrc::http_status : r.error().error.code;
        const std::chrono::seconds retry_after =
            r ? std::chrono::seconds(0) : r.error().retry_after;
        if (!trips_breaker(code, status, retry_after.count() > 0)) {
            continue;
        }
        // A server that says when to come back (Retry-After) is left alone
        // that long, at most an hour; otherwise for the breaker's window.
        const std::chrono::milliseconds window =
            retry_after.count() > 0
                ? std::min<std::chrono::milliseconds>(retry_after, kMaxRetryAfter)
                : settings.breaker_window;
        const std::string why =
            status != 0 ? "HTTP " + std::to_string(status) +
                              (retry_after.count() > 0
                                   ? ", Retry-After " + std::to_string(retry_after.count()) + " s"
                                   : "")
                        : r.error().error.message;
        breaker.failed(ticket, why, window);
        logging::warning("remote server " + server + " is down (" + why +
                         "): skipped by this node for " + std::to_string(window.count()) + " ms");
        return;
    }
    breaker.succeeded(ticket);
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

Result<Envelope, RemoteError> Client::Impl::get_object(const store::Key& key,
                                                       const std::string& url) {
    return decode_object(key, url, send(Op::get, url));
}

Result<Envelope, RemoteError> Client::Impl::decode_object(const store::Key& key,
                                                          const std::string& url,
                                                          Result<Reply, Failure> answer,
                                                          std::size_t in) {
    if (!answer) {
        return fail(std::move(answer.error().error));
    }
    auto env = decode_envelope(answer->body, key, settings.max_object_bytes, trust(in));
    if (!env) {
        const RemoteErrc code = env.error().code == EnvelopeErrc::wrong_key ? RemoteErrc::wrong_key
                                : env.error().code == EnvelopeErrc::too_large
                                    ? RemoteErrc::too_large
                                    : RemoteErrc::corrupt;
        return error(code, without_passwords(url, settings.base_urls) + ": " + env.error().message);
    }
    return std::move(env).value();
}

Result<Fetched, RemoteError> Client::Impl::fetched(Result<Envelope, RemoteError> env) {
    if (!env) {
        counters.misses++;
        count_error(env.error());
        return fail(std::move(env.error()));
    }
    counters.hits++;
    const LoadCheck check = env->by_builder ? LoadCheck::skip_trusted_builder : LoadCheck::required;
    if (check == LoadCheck::skip_trusted_builder) {
        counters.builder_hits++;
    }
    return Fetched{std::move(env->fields), std::move(env->provenance), std::move(env->bytes),
                   check};
}

Result<Fetched, RemoteError> Client::fetch(const store::KeyFields& fields) {
    return fetch(store::make_key(fields));
}

Result<Fetched, RemoteError> Client::fetch(const store::Key& key) {
    const auto start = std::chrono::steady_clock::now();
    auto env = impl_->fetch_object(key);
    if (impl_->settings.observe) {
        impl_->settings.observe(RemoteOp::get, start, env.ok());
    }
    return impl_->fetched(std::move(env));
}

Result<Held, RemoteError> Client::held(const store::KeyFields& fields) {
    const store::Key key = store::make_key(fields);
    return impl_->held_of(impl_->get_object(key, object_url(key)));
}

Result<Held, RemoteError> Client::Impl::held_of(Result<Envelope, RemoteError> env) {
    if (env) {
        return Held{Holding::verified, ""};
    }
    switch (env.error().code) {
        case RemoteErrc::not_found:
            return Held{Holding::absent, env.error().message};
        case RemoteErrc::corrupt:
        case RemoteErrc::wrong_key:
        case RemoteErrc::too_large:
            count_error(env.error());
            return Held{Holding::unusable, env.error().message};
        default:
            count_error(env.error());
            return fail(env.error());
    }
}

Result<bool, RemoteError> Client::exists(const store::Key& key) {
    const std::string url = object_url(key);
    auto r = impl_->send(Op::head, url);
    if (r || r.error().error.code == RemoteErrc::not_found) {
        return r.ok();
    }
    RemoteError e = r.error().error;
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
    const auto start = std::chrono::steady_clock::now();
    auto done = upload_unobserved(fields, bytes, provenance);
    if (settings.observe) {
        settings.observe(RemoteOp::put, start, done.ok());
    }
    return done;
}

Status<RemoteError> Client::Impl::upload_unobserved(const store::KeyFields& fields,
                                                    std::span<const std::uint8_t> bytes,
                                                    const store::Provenance& provenance) {
    auto object = prepare_upload(fields, bytes, provenance);
    if (!object) {
        return fail(std::move(object.error()));
    }
    return uploaded(send(Op::put, url_of(settings, store::make_key(fields)), *object));
}

Result<store::Bytes, RemoteError> Client::Impl::prepare_upload(
    const store::KeyFields& fields, std::span<const std::uint8_t> bytes,
    const store::Provenance& provenance) {
    if (settings.access == Access::read_only) {
        RemoteError e{RemoteErrc::read_only, "read-only remote: nothing uploaded"};
        upload_notes.add(e);
        return fail(std::move(e));
    }
    auto signed_object = object_for_upload(fields, bytes, provenance);
    if (!signed_object) {
        counters.upload_failures++;
        upload_notes.add(signed_object.error());
        return fail(signed_object.error());
    }
    if (signed_object->size() > settings.max_object_bytes) {
        counters.upload_failures++;
        RemoteError e{RemoteErrc::too_large, "object of " + std::to_string(signed_object->size()) +
                                                 " bytes over the size cap; not uploaded"};
        upload_notes.add(e);
        return fail(std::move(e));
    }
    return std::move(*signed_object);
}

Status<RemoteError> Client::Impl::uploaded(Result<Reply, Failure> r) {
    if (r) {
        counters.uploads++;
        return Ok{};
    }
    counters.upload_failures++;
    upload_notes.add(r.error().error, r.error().status);
    RemoteError e = std::move(r.error().error);
    if (e.code == RemoteErrc::timeout) {
        counters.timeouts++;
    }
    return fail(std::move(e));
}

Counters Client::counters() const {
    return snapshot(impl_->counters);
}

const Settings& Client::settings() const {
    return impl_->settings;
}

}  // namespace kcache::remote
