// The remote tier's S3 settings (docs/remote.md, "S3") and namespaces
// ("Namespaces"): how they map into the client's settings and show in
// `kcache doctor` (they are read and checked as every setting is:
// kcache_settings.def).

#include "kcache/config/remote_tier.hpp"
#include "kcache/remote/namespaces.hpp"

namespace kcache::service {

std::vector<remote::Namespace> remote_namespaces(const Config& c) {
    std::vector<remote::Namespace> out;
    auto names = remote::parse_namespaces(c.remote_namespace);
    if (!names) {
        // Set past the checks (the C++ API): Client::open refuses it, naming it.
        return {{c.remote_namespace, {}}};
    }
    for (std::string& name : *names) {
        const auto dirs = remote::namespace_trust_dirs(c.trusted_key_dirs, name);
        out.push_back({std::move(name), store::TrustedKeys::load(dirs, {})});
    }
    return out;
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
