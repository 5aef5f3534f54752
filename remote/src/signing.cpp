// The client's side of object signatures: the key that signs uploads, the
// trust that downloads are checked against, and credentials in URLs (which,
// like a bearer token, never go over plain http unless allowed).

#include "client_impl.hpp"
#include "kcache/sign/signature.hpp"

namespace kcache::remote {
namespace {

// True when `url` names credentials: "scheme://user[:password]@host…".
bool has_credentials(const std::string& url) {
    const auto scheme_end = url.find("://");
    if (scheme_end == std::string::npos) {
        return false;
    }
    const std::size_t host_start = scheme_end + 3;
    const std::size_t authority_end = std::min(url.find_first_of("/?#", host_start), url.size());
    return url.find('@', host_start) < authority_end;
}

}  // namespace

std::string without_passwords(std::string text, const std::vector<std::string>& urls) {
    for (const std::string& url : urls) {
        if (!has_credentials(url)) {
            continue;
        }
        const std::size_t host_start = url.find("://") + 3;
        const std::string info = url.substr(host_start, url.find('@', host_start) - host_start);
        const auto colon = info.find(':');
        if (colon == std::string::npos) {
            continue;  // a user without a password
        }
        const std::string shown = info.substr(0, colon) + ":***";
        for (auto at = text.find(info + "@"); at != std::string::npos;
             at = text.find(info + "@", at + shown.size())) {
            text.replace(at, info.size(), shown);
        }
    }
    return text;
}

Status<RemoteError> check_url_credentials(const Settings& settings) {
    if (settings.plain_http_token == PlainHttpToken::allow) {
        return Ok{};
    }
    for (const std::string& url : settings.base_urls) {
        if (url.rfind("http://", 0) == 0 && has_credentials(url)) {
            return config_error(
                "credentials in a plain http:// URL are never sent: use https://, or allow it "
                "explicitly (KCACHE_REMOTE_ALLOW_HTTP_TOKEN=1)");
        }
    }
    return Ok{};
}

Result<std::optional<store::SecretKey>, RemoteError> load_signing_key(const Settings& settings) {
    if (settings.signing_key_file.empty()) {
        return std::optional<store::SecretKey>();
    }
    auto key = store::read_secret_key(settings.signing_key_file);
    if (!key) {
        return config_error("the signing key (KCACHE_REMOTE_SIGNING_KEY) is unusable: " +
                            key.error().message);
    }
    return std::optional<store::SecretKey>(std::move(*key));
}

ObjectTrust Client::Impl::trust(std::size_t in) const {
    if (settings.namespaces.empty()) {
        return ObjectTrust{settings.signatures, &settings.trusted_keys, &settings.trusted_builders};
    }
    return ObjectTrust{settings.signatures, &settings.namespaces[in].trusted_keys,
                       &ns[in].builders};
}

Result<store::Bytes, RemoteError> Client::Impl::object_for_upload(
    const store::KeyFields& fields, std::span<const std::uint8_t> bytes,
    const store::Provenance& provenance) const {
    store::Bytes object = encode_envelope(fields, bytes, provenance);
    if (!signing_key) {
        if (settings.signatures == ObjectSignatures::require) {
            return config_error(kNoSigningKey);
        }
        return object;
    }
    auto signed_object = sign_envelope(std::move(object), *signing_key);
    if (!signed_object) {
        return config_error(signed_object.error().message);
    }
    return std::move(*signed_object);
}

std::optional<store::KeyId> Client::signing_key() const {
    return impl_->signing_key ? std::optional(impl_->signing_key->id) : std::nullopt;
}

std::optional<std::string> Client::why_no_uploads() const {
    if (impl_->settings.access == Access::read_only) {
        return "read-only remote (KCACHE_REMOTE_READONLY)";
    }
    if (!impl_->signing_key && impl_->settings.signatures == ObjectSignatures::require) {
        return kNoSigningKey;
    }
    return std::nullopt;
}

}  // namespace kcache::remote
