// The backend table: which backend serves which URL scheme. Adding a backend
// is one class implementing Backend (backend.hpp) and one row here.

#include <algorithm>
#include <string_view>

#include "backend.hpp"
#include "kcache/remote/schemes.hpp"

namespace kcache::remote {
namespace {

struct Row {
    std::string_view scheme;  // as written before "://"
    MakeBackend make;
};

constexpr Row kBackends[] = {
    {"http", make_http},            // http_backend.cpp
    {"https", make_http},           // the same backend, over TLS
    {"s3", make_s3},                // s3_backend.cpp
    {"redis", make_redis},          // redis_backend.cpp
    {"rediss", make_redis},         // refused: this hiredis has no TLS
    {"redis+cluster", make_redis},  // slots routed by redis_cluster.cpp
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

Status<RemoteError> check_schemes(const std::vector<std::string>& urls) {
    for (const std::string& url : urls) {
        if (!scheme_supported(url)) {
            return fail(RemoteError{RemoteErrc::config,
                                    "remote URL " + url + " has no supported scheme (supported: " +
                                        supported_scheme_list() + ")"});
        }
    }
    return Ok{};
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
