// The remote tier's settings (docs/remote.md): how the remote_* keys of the
// configuration are checked when read; the remote_s3_* ones ("S3") also how
// they map into the client's settings and show in `kcache doctor`.

#include <algorithm>

#include "kcache/config/quantity.hpp"
#include "kcache/config/remote_tier.hpp"
#include "kcache/remote/schemes.hpp"
#include "settings.hpp"

namespace kcache::service {
namespace {

std::vector<std::string> split_words(const std::string& v) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while ((start = v.find_first_not_of(" \t", start)) != std::string::npos) {
        auto end = v.find_first_of(" \t", start);
        out.push_back(v.substr(start, end == std::string::npos ? end : end - start));
        start = end;
    }
    return out;
}

// "http(s)://host[:port]" with at most a trailing slash: the bucket goes in
// front of the host or after it, so the endpoint carries no path.
bool endpoint_ok(const std::string& e) {
    const auto sep = e.find("://");
    if (sep == std::string::npos || (e.substr(0, sep) != "http" && e.substr(0, sep) != "https")) {
        return false;
    }
    std::string authority = e.substr(sep + 3);
    if (!authority.empty() && authority.back() == '/') {
        authority.pop_back();
    }
    return !authority.empty() && authority.find_first_of("/?#@ \t") == std::string::npos;
}

// A region is a word of a-z, 0-9 and '-' (libcurl takes at most 64 bytes).
bool region_ok(const std::string& r) {
    return !r.empty() && r.size() <= 64 && std::all_of(r.begin(), r.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
    });
}

}  // namespace

std::string apply_remote_s3(Config& c, const std::string& key, const std::string& value) {
    if (key == "remote_s3_endpoint") {
        if (!value.empty() && !endpoint_ok(value)) {
            return "expected http://host[:port] or https://host[:port] (no path)";
        }
        c.remote_s3_endpoint = value;
    } else if (key == "remote_s3_region") {
        if (!value.empty() && !region_ok(value)) {
            return "expected a region such as us-east-1 (a-z, 0-9 and '-')";
        }
        c.remote_s3_region = value;
    } else if (key == "remote_s3_url_style") {
        if (value != "" && value != "path" && value != "virtual") {
            return "expected path, virtual, or an empty value (virtual-hosted on AWS, path-style "
                   "on any other endpoint)";
        }
        c.remote_s3_url_style = value;
    } else if (key == "remote_s3_credentials_file") {
        c.remote_s3_credentials_file = value;
    } else if (key == "remote_s3_profile") {
        c.remote_s3_profile = value;
    } else {
        return "unknown setting";
    }
    return {};
}

remote::S3Settings remote_s3_settings(const Config& c) {
    remote::S3Settings s;
    s.endpoint = c.remote_s3_endpoint;
    s.region = c.remote_s3_region;
    s.url_style = c.remote_s3_url_style == "path"      ? remote::S3UrlStyle::path
                  : c.remote_s3_url_style == "virtual" ? remote::S3UrlStyle::virtual_hosted
                                                       : remote::S3UrlStyle::automatic;
    s.credentials_file = c.remote_s3_credentials_file;
    s.profile = c.remote_s3_profile;
    return s;
}

std::string remote_s3_effective(const Config& c, const std::string& name) {
    const remote::S3Settings s = remote_s3_settings(c);
    if (name == "remote_s3_endpoint") {
        return s.endpoint.empty() ? "(AWS: https://s3.<region>.amazonaws.com)" : s.endpoint;
    }
    if (name == "remote_s3_region") {
        return s.region.empty() ? "(AWS_REGION, AWS_DEFAULT_REGION, else us-east-1)" : s.region;
    }
    if (name == "remote_s3_url_style") {
        return s.url_style == remote::S3UrlStyle::path             ? "path"
               : s.url_style == remote::S3UrlStyle::virtual_hosted ? "virtual"
               : s.endpoint.empty() ? "virtual (automatic: AWS's endpoint)"
                                    : "path (automatic: an endpoint of your own)";
    }
    if (name == "remote_s3_credentials_file") {
        return s.credentials_file.empty()
                   ? "(none: the environment, then AWS_SHARED_CREDENTIALS_FILE or "
                     "~/.aws/credentials)"
                   : s.credentials_file.string();
    }
    return s.profile.empty() ? "(AWS_PROFILE, else default)" : s.profile;
}

// Applies one remote_* setting of the config file (docs/remote.md); returns
// "" or what is wrong.
std::string apply_remote_setting(Config& c, const std::string& key, const std::string& value) {
    if (key == "remote") {
        c.remote_urls = split_words(value);
        for (const auto& u : c.remote_urls) {
            if (!remote::scheme_supported(u)) {
                return "expected URLs separated by spaces, of a supported scheme (" +
                       remote::supported_scheme_list() + "), got " + u;
            }
        }
    } else if (key == "remote_timeout_ms" || key == "remote_connect_timeout_ms" ||
               key == "remote_breaker_ms") {
        auto& out = key == "remote_timeout_ms"           ? c.remote_timeout
                    : key == "remote_connect_timeout_ms" ? c.remote_connect_timeout
                                                         : c.remote_breaker_window;
        if (!parse_ms_setting(value, 3'600'000, out)) {
            return "expected milliseconds between 1 and 3600000";
        }
    } else if (key == "remote_token_file") {
        c.remote_token_file = value;
    } else if (key == "remote_ca") {
        c.remote_ca = value;
    } else if (key == "remote_signing_key") {
        c.remote_signing_key = value;
    } else if (key == "remote_trusted_builders") {
        // No field of Config: the value is read from Config::origins
        // (service::trusted_builder_files).
    } else if (key == "remote_ttl") {
        auto ttl = parse_duration(value.empty() ? "0" : value, BareUnit::seconds);
        if (!ttl || ttl->count() < 0) {
            return "expected a duration such as 604800 (seconds), 12h or 7d; 0 or empty: none";
        }
        c.remote_ttl = *ttl;
    } else if (key.rfind("remote_s3_", 0) == 0) {
        return apply_remote_s3(c, key, value);
    } else {
        return "unknown setting";
    }
    return {};
}

}  // namespace kcache::service
