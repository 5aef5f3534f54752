// The backend table: which backend serves which URL scheme, and which
// reads attributes of its base URLs (`s3://bucket/prefix?region=…`). Adding
// a backend is one class implementing Backend (backend.hpp) and one row here.

#include <algorithm>
#include <optional>
#include <string_view>

#include "backend.hpp"
#include "kcache/remote/schemes.hpp"

namespace kcache::remote {

// Each backend's maker, defined in its own .cpp, and for one that reads
// attributes of its base URLs, their check: declared here, beside its row.
// The backend over HTTP and HTTPS (http_backend.cpp).
Result<std::unique_ptr<Backend>, RemoteError> make_http(
    const Settings& settings, const std::shared_ptr<Credential>& credential);
// S3 buckets, s3://bucket/prefix?region=… (s3_backend.cpp; docs/remote.md, "S3").
Result<std::unique_ptr<Backend>, RemoteError> make_s3(
    const Settings& settings, const std::shared_ptr<Credential>& credential);
Status<RemoteError> check_s3_attributes(const std::string& url, const std::string& attributes);
// redis:// and redis+cluster:// (redis_backend.cpp); the credential gives the
// password when a URL names none. A config error for a URL it cannot serve
// (rediss://: this hiredis has no TLS) or a password it would send in clear
// that the settings do not allow.
Result<std::unique_ptr<Backend>, RemoteError> make_redis(
    const Settings& settings, const std::shared_ptr<Credential>& credential);

namespace {

struct Row {
    std::string_view scheme;  // as written before "://"
    MakeBackend make;
    CheckAttributes attributes;  // nullptr: a base URL of this scheme takes none
};

constexpr Row kBackends[] = {
    {"http", make_http, nullptr},            // http_backend.cpp
    {"https", make_http, nullptr},           // the same backend, over TLS
    {"s3", make_s3, check_s3_attributes},    // s3_backend.cpp
    {"redis", make_redis, nullptr},          // redis_backend.cpp
    {"rediss", make_redis, nullptr},         // refused: this hiredis has no TLS
    {"redis+cluster", make_redis, nullptr},  // slots routed by redis_cluster.cpp
};

// The row of `url`'s scheme; nullptr when no row has it.
const Row* row_of(const std::string& url) {
    for (const Row& row : kBackends) {
        const std::string prefix = std::string(row.scheme) + "://";
        if (url.compare(0, prefix.size(), prefix) == 0) {
            return &row;
        }
    }
    return nullptr;
}

}  // namespace

std::vector<std::string> supported_schemes() {
    std::vector<std::string> out;
    for (const Row& row : kBackends) {
        out.emplace_back(row.scheme);
    }
    return out;
}

std::string supported_scheme_list() {
    std::string out;
    for (const Row& row : kBackends) {
        out += (out.empty() ? "" : ", ") + std::string(row.scheme) + "://";
    }
    return out;
}

bool scheme_supported(const std::string& url) {
    return row_of(url) != nullptr;
}

std::pair<std::string, std::string> split_attributes(const std::string& url) {
    const auto q = url.find('?');
    if (q == std::string::npos) {
        return {url, ""};
    }
    return {url.substr(0, q), url.substr(q + 1)};
}

Status<RemoteError> check_base_url(const std::string& url) {
    const Row* row = row_of(url);
    if (row == nullptr) {
        return config_error("remote URL " + url + " has no supported scheme (supported: " +
                            supported_scheme_list() + ")");
    }
    const auto [base, attributes] = split_attributes(url);
    if (url.find('?') == std::string::npos) {
        return Ok{};
    }
    if (row->attributes == nullptr) {
        return config_error("remote URL " + url + ": a " + std::string(row->scheme) +
                            ":// URL takes no attributes (the part after '?')");
    }
    return row->attributes(base, attributes);
}

Status<RemoteError> split_base_urls(Settings& settings) {
    for (std::string& url : settings.base_urls) {
        if (auto ok = check_base_url(url); !ok) {
            return ok;
        }
        auto [base, attributes] = split_attributes(url);
        if (!attributes.empty()) {
            settings.url_attributes[base] = std::move(attributes);
        }
        url = std::move(base);
    }
    return Ok{};
}

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = static_cast<char>(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// `text` with each %XX decoded; nullopt for a '%' not followed by two hex digits.
std::optional<std::string> percent_decoded(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out += text[i];
            continue;
        }
        const int hi = i + 2 < text.size() ? hex_digit(text[i + 1]) : -1;
        const int lo = hi >= 0 ? hex_digit(text[i + 2]) : -1;
        if (lo < 0) {
            return std::nullopt;
        }
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return out;
}

}  // namespace

Result<Attributes, RemoteError> parse_attributes(const std::string& url, const std::string& text,
                                                 std::initializer_list<std::string_view> known) {
    Attributes out;
    std::string names;
    for (std::string_view k : known) {
        names += (names.empty() ? "" : ", ") + std::string(k);
    }
    for (std::size_t pos = 0; pos <= text.size();) {
        const std::size_t end = std::min(text.find('&', pos), text.size());
        const std::string item = text.substr(pos, end - pos);
        const auto eq = item.find('=');
        const std::string name = item.substr(0, eq);
        auto value = percent_decoded(eq == std::string::npos ? "" : item.substr(eq + 1));
        const bool is_known = std::find(known.begin(), known.end(), name) != known.end();
        if (eq == std::string::npos || !value || !is_known) {
            return config_error("remote URL " + url + ": \"" + item +
                                "\" is not an attribute this backend takes (name=value, "
                                "values %-encoded; names: " +
                                names + ")");
        }
        if (out.contains(name)) {
            return config_error("remote URL " + url + ": the attribute " + name +
                                " is given twice");
        }
        out.emplace(name, std::move(*value));
        pos = end + 1;
    }
    return out;
}

Status<RemoteError> Backends::open(const Settings& settings,
                                   const std::shared_ptr<Credential>& credential) {
    for (const std::string& url : settings.base_urls) {
        const Row* row = row_of(url);
        const bool made = std::any_of(made_.begin(), made_.end(),
                                      [&](const auto& m) { return m.first == row->make; });
        if (!made) {
            auto backend = row->make(settings, credential);
            if (!backend) {
                return fail(backend.error());
            }
            made_.emplace_back(row->make, std::move(*backend));
        }
    }
    return Ok{};
}

Result<std::unique_ptr<Backend>, RemoteError> make_backend(
    const Settings& settings, const std::shared_ptr<Credential>& credential) {
    const Row* row = settings.base_urls.empty() ? nullptr : row_of(settings.base_urls.front());
    if (row == nullptr) {
        return config_error(
            "no remote URL of a supported scheme (supported: " + supported_scheme_list() + ")");
    }
    return row->make(settings, credential);
}

Backend& Backends::of(const std::string& url) {
    const Row* row = row_of(url);
    const auto it = std::find_if(made_.begin(), made_.end(),
                                 [&](const auto& m) { return row && m.first == row->make; });
    return *(it != made_.end() ? it : made_.begin())->second;
}

Result<Reply, Failure> request(Backend& backend, Op op, const std::string& url,
                               std::span<const std::uint8_t> body) {
    switch (op) {
        case Op::get:
            return backend.get(url);
        case Op::head:
            return backend.head(url);
        case Op::put:
            return backend.put(url, body);
        case Op::remove:
            return backend.remove(url);
    }
    return backend.get(url);
}

std::vector<Result<Reply, Failure>> Backend::get_many(const std::vector<std::string>& urls) {
    std::vector<Result<Reply, Failure>> out;
    for (const std::string& url : urls) {
        out.push_back(get(url));
    }
    return out;
}

std::vector<Result<Reply, Failure>> Backend::put_many(const std::vector<PutItem>& items) {
    std::vector<Result<Reply, Failure>> out;
    for (const PutItem& item : items) {
        out.push_back(put(item.url, item.object));
    }
    return out;
}

std::string server_name(const std::string& url) {
    const auto scheme_end = url.find("://");
    const std::size_t host_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
    const std::size_t host_end = std::min(url.find('/', host_start), url.size());
    std::string host = url.substr(host_start, host_end - host_start);
    if (const auto at = host.rfind('@'); at != std::string::npos) {
        host.erase(0, at + 1);
    }
    return url.substr(0, host_start) + host;
}

std::optional<Reply> answered(const Result<Reply, Failure>& r) {
    if (r) {
        return *r;
    }
    if (r.error().status != 0) {
        return Reply{r.error().status, {}};
    }
    return std::nullopt;
}

}  // namespace kcache::remote
