// The remote_s3_* settings (docs/remote.md, "S3"): how they are checked when
// read, mapped into the client's settings, and shown by `kcache doctor`.

#include <algorithm>

#include "kcache/cache/remote_tier.hpp"

namespace kcache::service {
namespace {

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

}  // namespace kcache::service
