// The S3 backend: s3://bucket/prefix base URLs. Each request is one HTTP
// request to the bucket's endpoint through the HTTP transport (http.cpp: the
// same timeouts, size cap, TLS trust and pooled connections), signed with
// AWS Signature Version 4 by libcurl (CURLOPT_AWS_SIGV4). libcurl 7.88 signs
// the method, path, Host, every header given to it, and the payload hash
// named by x-amz-content-sha256, so the backend sends that header (S3
// requires it) and x-amz-security-token for temporary credentials; nothing
// had to be signed by hand. S3 has no directories: an upload is one PUT.
// Statuses map as for HTTP: 200 for get, head and put, 200/204 for remove,
// 404 not_found; a refusal keeps S3's error code (<Code> of the XML body).

#include <openssl/evp.h>

#include <algorithm>

#include "http/http.hpp"
#include "kcache/common/sha256.hpp"
#include "listing.hpp"
#include "s3.hpp"

namespace kcache::remote {
namespace {

bool lower_or_digit(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool bucket_name_ok(const std::string& b) {
    return b.size() >= 3 && b.size() <= 63 && lower_or_digit(b.front()) &&
           lower_or_digit(b.back()) && b.find("..") == std::string::npos &&
           std::all_of(b.begin(), b.end(),
                       [](char c) { return lower_or_digit(c) || c == '.' || c == '-'; });
}

// Letters, digits and - _ . in segments separated by single slashes; no
// segment "." or "..": the path is signed as written, never normalized.
bool prefix_ok(const std::string& p) {
    std::size_t start = 0;
    while (start < p.size()) {
        const std::size_t end = std::min(p.find('/', start), p.size());
        const std::string seg = p.substr(start, end - start);
        const bool chars_ok = std::all_of(seg.begin(), seg.end(), [](char c) {
            return lower_or_digit(c) || (c >= 'A' && c <= 'Z') || c == '-' || c == '_' || c == '.';
        });
        if (!chars_ok || (seg.empty() && end != p.size()) || seg == "." || seg == "..") {
            return false;
        }
        start = end + 1;
    }
    return true;
}

constexpr std::string_view kScheme = "s3://";

// S3's error code from an error body (<Error><Code>NoSuchBucket</Code>…);
// "" when there is none that reads as a code.
std::string error_code(const store::Bytes& body) {
    const std::string text(body.begin(), body.begin() + std::min<std::size_t>(body.size(), 4096));
    const auto b = text.find("<Code>");
    const auto e = text.find("</Code>");
    if (b == std::string::npos || e == std::string::npos || e <= b + 6 || e - b - 6 > 64) {
        return "";
    }
    const std::string code = text.substr(b + 6, e - b - 6);
    const bool word = std::all_of(code.begin(), code.end(), [](char c) {
        return lower_or_digit(c) || (c >= 'A' && c <= 'Z');
    });
    return word ? code : "";
}

// One s3:// base URL's place: its bucket's endpoint and addressing, and the
// keys that sign for it (its attributes over the settings' defaults).
struct Site {
    std::string base;  // s3://bucket[/prefix], without attributes
    S3Settings settings;
    S3Target target;
    std::unique_ptr<S3Keys> keys;  // reads `settings`
};

// The bucket of an s3:// URL.
std::string bucket_of(const std::string& url) {
    const std::string rest = url.substr(std::min(url.size(), kScheme.size()));
    return rest.substr(0, rest.find_first_of("/?"));
}

class S3Backend final : public Backend {
  public:
    S3Backend(const Settings& settings, std::vector<std::unique_ptr<Site>> sites)
        : http_(settings, nullptr), sites_(std::move(sites)) {}

    Result<Reply, Failure> get(const std::string& url) override {
        return send(Method::get, url, {}, {200});
    }
    Result<Reply, Failure> head(const std::string& url) override {
        return send(Method::head, url, {}, {200});
    }
    Result<Reply, Failure> put(const std::string& url,
                               std::span<const std::uint8_t> object) override {
        return send(Method::put, url, object, {200});
    }
    Result<Reply, Failure> remove(const std::string& url) override {
        return send(Method::del, url, {}, {200, 204});
    }
    // libcurl signs with OpenSSL's SHA-256, whose first use in a process
    // fetches the digest (and loads the provider if nothing has): done here
    // rather than in the first request's signature.
    bool warm_up(const std::string& url, const std::atomic<bool>& stop) override {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int size = 0;
        (void)EVP_Digest("", 0, digest, &size, EVP_sha256(), nullptr);
        return http_.preconnect(s3_http_url(site_of(url).target, url), stop);
    }
    Result<std::vector<ListedObject>, Failure> list(const std::string& dir) override {
        return s3_list(*this, dir);  // s3_list.cpp: signed GETs of the bucket
    }

  private:
    // The site of `url`: that of the longest base URL it starts with (at a
    // '/' or '?'), else the first of its bucket (a listing names the bucket
    // alone), else the first.
    Site& site_of(const std::string& url) {
        Site* best = nullptr;
        for (const auto& site : sites_) {
            const std::string& b = site->base;
            const bool under =
                url.compare(0, b.size(), b) == 0 &&
                (url.size() == b.size() || url[b.size()] == '/' || url[b.size()] == '?');
            if (under && (best == nullptr || b.size() > best->base.size())) {
                best = site.get();
            }
        }
        for (const auto& site : sites_) {
            if (best == nullptr && bucket_of(site->base) == bucket_of(url)) {
                best = site.get();
            }
        }
        return best != nullptr ? *best : *sites_.front();
    }

    // One signed request for the object `url` (s3://…); sent once more when
    // the keys were refused and their file now holds others (rotated).
    Result<Reply, Failure> send(Method m, const std::string& url,
                                std::span<const std::uint8_t> body,
                                std::initializer_list<long> ok) {
        Site& site = site_of(url);
        const S3Keys::Now keys = site.keys->current();
        auto reply = send_as(m, site.target, url, body, ok, keys);
        if (!reply && refused(reply.error()) && site.keys->refresh(keys)) {
            return send_as(m, site.target, url, body, ok, site.keys->current());
        }
        return reply;
    }

    // Whether `f` is S3's refusal of the keys that signed (a wrong or
    // rotated-out key: 403; expired temporary credentials: 400 ExpiredToken).
    static bool refused(const Failure& f) {
        return f.status == 403 ||
               (f.status == 400 && f.error.message.find("(ExpiredToken)") != std::string::npos);
    }

    Result<Reply, Failure> send_as(Method m, const S3Target& target, const std::string& url,
                                   std::span<const std::uint8_t> body,
                                   std::initializer_list<long> ok, const S3Keys::Now& keys) {
        const std::string http_url = s3_http_url(target, url);
        RequestAuth auth{&keys.sig, {}};
        const std::string_view payload(reinterpret_cast<const char*>(body.data()), body.size());
        auth.headers.push_back("x-amz-content-sha256: " + sha256_hex(payload));
        if (!keys.session_token.empty()) {
            auth.headers.push_back("x-amz-security-token: " + keys.session_token);
        }
        auto r = http_.perform(m, http_url, body, auth);
        const std::string code = r && r->status != 0 ? error_code(r->body) : "";
        auto reply = reply_of(m, http_url, std::move(r), ok);
        if (!reply && !code.empty() && reply.error().status != 404) {
            Failure f = reply.error();
            f.error.message += " (" + code + ")";
            return fail(std::move(f));
        }
        return reply;
    }

    Http http_;
    std::vector<std::unique_ptr<Site>> sites_;
};

// The site of the base URL `url`: its attributes (`attributes`) over the
// settings' S3 defaults, the target and the credentials they name.
Result<std::unique_ptr<Site>, RemoteError> make_site(const Settings& settings,
                                                     const std::string& url) {
    if (auto ok = check_s3_url(url); !ok) {
        return fail(ok.error());
    }
    const auto a = settings.url_attributes.find(url);
    auto site = std::make_unique<Site>();
    site->base = url;
    auto own =
        s3_settings_of(url, a == settings.url_attributes.end() ? "" : a->second, settings.s3);
    if (!own) {
        return fail(own.error());
    }
    site->settings = std::move(*own);
    auto target = s3_target(site->settings);
    if (!target) {
        return fail(target.error());
    }
    site->target = std::move(*target);
    auto credentials = find_s3_credentials(site->settings);
    if (!credentials) {
        return fail(credentials.error());
    }
    site->keys = std::make_unique<S3Keys>(site->settings, std::move(*credentials));
    return site;
}

}  // namespace

Status<RemoteError> check_s3_url(const std::string& url) {
    if (url.compare(0, kScheme.size(), kScheme) != 0) {
        return config_error("not an s3:// URL: " + url);
    }
    const std::string rest = url.substr(kScheme.size());
    const std::string bucket = rest.substr(0, rest.find('/'));
    const std::string prefix = bucket.size() < rest.size() ? rest.substr(bucket.size() + 1) : "";
    if (!bucket_name_ok(bucket)) {
        return config_error("remote URL " + url + ": the bucket name \"" + bucket +
                            "\" is not one S3 accepts (3 to 63 of a-z, 0-9, '.' and '-', "
                            "starting and ending with a letter or digit)");
    }
    if (!prefix_ok(prefix)) {
        return config_error("remote URL " + url +
                            ": the prefix may hold letters, digits, '-', "
                            "'_', '.' and single '/' (no '.' or '..' part)");
    }
    return Ok{};
}

Result<S3Target, RemoteError> s3_target(const S3Settings& settings) {
    S3Target t;
    if (settings.endpoint.empty()) {
        t.scheme = "https";
        t.authority = "s3." + s3_region(settings) + ".amazonaws.com";
        t.virtual_hosted = settings.url_style != S3UrlStyle::path;
        return t;
    }
    std::string e = settings.endpoint;
    while (!e.empty() && e.back() == '/') {
        e.pop_back();
    }
    const auto sep = e.find("://");
    t.scheme = sep == std::string::npos ? "" : e.substr(0, sep);
    t.authority = sep == std::string::npos ? "" : e.substr(sep + 3);
    const bool authority_ok =
        !t.authority.empty() && t.authority.find_first_of("/?#@ \t") == std::string::npos;
    if ((t.scheme != "http" && t.scheme != "https") || !authority_ok) {
        return config_error("S3 endpoint \"" + settings.endpoint +
                            "\": expected http://host[:port] or https://host[:port]");
    }
    t.virtual_hosted = settings.url_style == S3UrlStyle::virtual_hosted;
    return t;
}

std::string s3_http_url(const S3Target& target, const std::string& url) {
    const std::string rest = url.substr(std::min(url.size(), kScheme.size()));
    const auto slash = rest.find('/');
    const std::string bucket = rest.substr(0, slash);
    const std::string path = slash == std::string::npos ? "" : rest.substr(slash + 1);
    if (target.virtual_hosted) {
        return target.scheme + "://" + bucket + "." + target.authority + "/" + path;
    }
    // A bucket's own query (a listing: "?list-type=2…") follows its name
    // without a slash, the path that S3 servers sign for it.
    const bool query = !path.empty() && path[0] == '?';
    return target.scheme + "://" + target.authority + "/" + bucket + (query ? "" : "/") + path;
}

Result<S3Settings, RemoteError> s3_settings_of(const std::string& url,
                                               const std::string& attributes, S3Settings defaults) {
    if (attributes.empty()) {
        return defaults;
    }
    auto a = parse_attributes(url, attributes,
                              {"region", "endpoint", "url_style", "profile", "credentials_file"});
    if (!a) {
        return fail(a.error());
    }
    S3Settings s = std::move(defaults);
    for (const auto& [name, value] : *a) {
        if (name == "region") {
            s.region = value;
        } else if (name == "endpoint") {
            s.endpoint = value;
        } else if (name == "profile") {
            s.profile = value;
        } else if (name == "credentials_file") {
            s.credentials_file = value;
        } else if (value == "path" || value == "virtual" || value == "auto") {  // url_style
            s.url_style = value == "path"      ? S3UrlStyle::path
                          : value == "virtual" ? S3UrlStyle::virtual_hosted
                                               : S3UrlStyle::automatic;
        } else {
            return config_error("remote URL " + url + ": url_style=" + value +
                                " is not one of path, virtual or auto");
        }
    }
    const bool region_ok =
        s.region.size() <= 64 && std::all_of(s.region.begin(), s.region.end(),
                                             [](char c) { return lower_or_digit(c) || c == '-'; });
    if (!region_ok) {
        return config_error("remote URL " + url + ": region=" + s.region +
                            " is not a region such as us-east-1 (a-z, 0-9 and '-')");
    }
    return s;
}

Status<RemoteError> check_s3_attributes(const std::string& url, const std::string& attributes) {
    auto s = s3_settings_of(url, attributes, {});
    if (!s) {
        return fail(s.error());
    }
    if (auto target = s3_target(*s); !target) {
        return config_error("remote URL " + url + ": " + target.error().message);
    }
    return Ok{};
}

Result<std::unique_ptr<Backend>, RemoteError> make_s3(
    const Settings& settings, const std::shared_ptr<Credential>& /*credential*/) {
    // A bearer token is for the http(s) servers among the base URLs; S3
    // requests carry a signature instead.
    std::vector<std::unique_ptr<Site>> sites;
    for (const std::string& url : settings.base_urls) {
        if (url.compare(0, kScheme.size(), kScheme) == 0) {
            auto site = make_site(settings, url);
            if (!site) {
                return fail(site.error());
            }
            sites.push_back(std::move(*site));
        }
    }
    return std::unique_ptr<Backend>(std::make_unique<S3Backend>(settings, std::move(sites)));
}

}  // namespace kcache::remote
