// What stats, doctor and explain show of the remote tier.

#include <algorithm>
#include <sstream>

#include "kcache/common/read_file.hpp"
#include "kcache/config/remote_tier.hpp"
#include "kcache/remote/schemes.hpp"
#include "kcache/sign/signature.hpp"
#include "remote_cli.hpp"

namespace kcache::cli {

namespace {

nlohmann::json counters_json(const remote::Counters& c) {
    nlohmann::json out = nlohmann::json::object();
#define KCACHE_REMOTE_COUNTER(field, doc) out[#field] = c.field;
#include "kcache/remote/counters.def"
#undef KCACHE_REMOTE_COUNTER
    return out;
}

}  // namespace

nlohmann::json remote_stats_json(const std::filesystem::path& store_dir) {
    return counters_json(remote::read_stats_file(store_dir));
}

nlohmann::json remote_namespace_stats_json(const std::filesystem::path& store_dir) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [name, counters] : remote::read_namespace_stats(store_dir)) {
        out[name] = counters_json(counters);
    }
    return out;
}

std::string remote_effective(const Config& c, const std::string& name) {
    auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
    auto ms = [](std::chrono::milliseconds v) { return std::to_string(v.count()); };
    if (name == "remote") {
        std::string urls;
        for (const auto& u : c.remote_urls) {
            urls += (urls.empty() ? "" : " ") + u;
        }
        return urls.empty() ? "(none: the remote tier is off)"
                            : remote::without_passwords(urls, c.remote_urls);
    }
    if (name == "remote_readonly") {
        return flag(c.remote_read_only);
    }
    if (name == "remote_timeout_ms") {
        return ms(c.remote_timeout);
    }
    if (name == "remote_connect_timeout_ms") {
        return ms(c.remote_connect_timeout);
    }
    if (name == "remote_breaker_ms") {
        return ms(c.remote_breaker_window);
    }
    if (name == "remote_namespace") {
        return c.remote_namespace.empty()
                   ? "(none: the default layout, kcache/v1/)"
                   : c.remote_namespace + " (uploads to " +
                         c.remote_namespace.substr(0, c.remote_namespace.find(',')) + ")";
    }
    if (name == "remote_ttl") {
        return c.remote_ttl.count() == 0 ? "0 (objects never expire)" : ms(c.remote_ttl) + " ms";
    }
    if (name == "remote_token_file") {
        return c.remote_token_file.empty() ? "(none)" : c.remote_token_file.string();
    }
    if (name == "remote_token_command") {  // not shown: a command line may carry a secret
        return c.remote_token_command.empty() ? "(none)" : "(set; not shown)";
    }
    if (name == "remote_ca") {
        return c.remote_ca.empty() ? "(system CAs)" : c.remote_ca.string();
    }
    if (name == "remote_netrc") {
        return flag(c.remote_netrc);
    }
    if (name == "remote_required") {
        return flag(c.remote_required);
    }
    if (name == "remote_require_signed") {
        return flag(c.remote_require_signed);
    }
    if (name.rfind("remote_s3_", 0) == 0) {
        return service::remote_s3_effective(c, name);
    }
    if (name == "remote_trusted_builders") {
        const auto files = service::trusted_builder_files(c);
        std::string shown;
        for (const auto& f : files) {
            shown += (shown.empty() ? "" : ":") + f.string();
        }
        return files.empty() ? "(none: every remote object is load-checked)" : shown;
    }
    if (name == "remote_signing_key") {
        return c.remote_signing_key.empty() ? "(none: uploads are not signed)"
                                            : c.remote_signing_key.string();
    }
    return flag(c.remote_allow_http_token);
}

namespace {

// The signature policy, the key that signs uploads and the keys trusted: a
// problem when signatures are required but no key is trusted (every object
// would be a miss) or the signing key is unusable.
RemoteCheck signature_check(const Config& config) {
    const remote::Settings s = service::remote_settings(config);
    const bool required = s.signatures == remote::ObjectSignatures::require;
    const std::size_t trusted = s.trusted_keys.keys().size();
    std::string detail =
        std::string(required ? "required" : "not required (unsigned objects used)") + "; " +
        std::to_string(trusted) + " trusted key(s)";
    bool ok = !required || trusted > 0;
    if (const std::size_t builders = s.trusted_builders.keys().size(); builders > 0) {
        detail += "; " + std::to_string(builders) +
                  " trusted builder key(s): objects they sign skip the load check";
    }
    for (const std::string& problem : s.trusted_builders.problems()) {
        detail += "; builder key left out: " + problem;
        ok = false;
    }
    if (s.signing_key_file.empty()) {
        detail += "; uploads ";
        detail += required ? "off: no signing key (KCACHE_REMOTE_SIGNING_KEY)" : "unsigned";
    } else if (auto key = store::read_secret_key(s.signing_key_file); key) {
        detail += "; uploads signed by key " + store::key_id_hex(key->id) + " (" +
                  s.signing_key_file.string() + ")";
    } else {
        detail += "; signing key unusable: " + key.error().message;
        ok = false;
    }
    if (required && trusted == 0) {
        detail +=
            ": every object is a miss until a writer's .pub is in trusted.d or "
            "KCACHE_TRUSTED_KEYS (or KCACHE_REMOTE_REQUIRE_SIGNED=0)";
    }
    return {"signatures", detail, ok};
}

// The namespaces and the keys each trusts (its trusted.d/namespaces/<name>/
// directories): a problem when signatures are required and one trusts none
// (its objects would all be misses). nullopt without namespaces.
std::optional<RemoteCheck> namespace_check(const Config& config) {
    const remote::Settings s = service::remote_settings(config);
    if (s.namespaces.empty()) {
        return std::nullopt;
    }
    const bool required = s.signatures == remote::ObjectSignatures::require;
    std::string detail = "uploads to " + s.namespaces.front().name + "; reads";
    bool ok = true;
    for (const remote::Namespace& n : s.namespaces) {
        const std::size_t keys = n.trusted_keys.keys().size();
        detail += " " + n.name + " (" + std::to_string(keys) + " trusted key(s))";
        ok = ok && (keys > 0 || !required);
        for (const std::string& problem : n.trusted_keys.problems()) {
            detail += "; " + n.name + " key left out: " + problem;
            ok = false;
        }
    }
    if (!ok) {
        detail +=
            ": a namespace's objects are used only when signed by a key of its own "
            "trusted.d/namespaces/<name>/ directory";
    }
    return RemoteCheck{"namespaces", detail, ok};
}

// Where each s3:// base URL's credentials come from (the access key id,
// never the secret); a problem when none are found. Empty when no base URL
// is an s3:// one.
std::vector<RemoteCheck> s3_credentials_checks(const Config& config) {
    std::vector<RemoteCheck> out;
    std::size_t s3 = 0;
    for (const std::string& url : config.remote_urls) {
        s3 += url.rfind("s3://", 0) == 0 ? 1 : 0;
    }
    for (const std::string& url : config.remote_urls) {
        if (url.rfind("s3://", 0) != 0) {
            continue;
        }
        auto origin = remote::s3_credentials_origin(url, service::remote_s3_settings(config));
        const std::string name =
            s3 == 1 ? "s3 credentials" : "s3 credentials " + remote::split_attributes(url).first;
        out.push_back({name, origin ? *origin : origin.error().message, static_cast<bool>(origin)});
    }
    return out;
}

// One line per server whose breaker is open (a `remote-down.<server>` mark
// in `store_dir` whose time has not passed).
std::vector<RemoteCheck> open_breakers(const std::filesystem::path& store_dir) {
    std::vector<RemoteCheck> out;
    std::error_code ec;
    const std::string prefix = "remote-down.";
    for (const auto& e : std::filesystem::directory_iterator(store_dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind(prefix, 0) != 0 || name.find(".tmp.") != std::string::npos) {
            continue;
        }
        auto text = read_regular_file(e.path(), 4096);  // FIFO, device: no mark
        std::istringstream mark(text ? std::move(*text) : std::string());
        long long until = 0;
        std::string why;
        const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
        if (mark >> until && std::getline(mark, why) && until > now) {
            out.push_back({"breaker " + name.substr(prefix.size()),
                           "open for " + std::to_string(until - now) + " ms more:" + why, false});
        }
    }
    return out;
}

}  // namespace

std::optional<std::string> no_signed_uploads(const Config& config) {
    auto client = service::open_remote(config);
    if (!client || !*client || (*client)->settings().access == remote::Access::read_only) {
        return std::nullopt;
    }
    return (*client)->why_no_uploads();
}

namespace {

// Whether this node uploads what it builds, and if not why: read-only, no
// signing key while signatures are required, or the server's breaker open
// (the PUT probe lines below say whether a server takes an object).
RemoteCheck uploads_check(const Config& config, const std::vector<RemoteCheck>& breakers) {
    auto client = service::open_remote(config);
    if (!client || !*client) {
        return {"uploads", "unknown: the remote cannot be opened (see below)", false};
    }
    if ((*client)->settings().access == remote::Access::read_only) {
        return {"uploads", "off: read-only remote (KCACHE_REMOTE_READONLY)", true};
    }
    // Not problems of their own: a node may be meant to read only, and an
    // open breaker is a problem line of its own.
    if (auto why = (*client)->why_no_uploads()) {
        return {"uploads", "off: " + *why, true};
    }
    if (!breakers.empty()) {
        return {"uploads",
                "skipped while a breaker is open (below): nothing is sent to that server", true};
    }
    return {"uploads",
            std::string("on: what is built is uploaded in the background") +
                ((*client)->signing_key() ? ", signed" : ", unsigned"),
            true};
}

}  // namespace

std::vector<RemoteCheck> remote_checks(const Config& config) {
    std::vector<RemoteCheck> out;
    if (config.remote_urls.empty()) {
        return out;
    }
    const std::vector<RemoteCheck> breakers = open_breakers(config.dir);
    out.push_back(uploads_check(config, breakers));
    out.push_back(signature_check(config));
    if (auto ns = namespace_check(config)) {
        out.push_back(std::move(*ns));
    }
    for (RemoteCheck& s3 : s3_credentials_checks(config)) {
        out.push_back(std::move(s3));
    }
    out.insert(out.end(), breakers.begin(), breakers.end());
    for (const std::string& url : config.remote_urls) {
        // Passwords in URLs are never printed.
        const auto shown = [&](const std::string& line) {
            return remote::without_passwords(line, {url});
        };
        if (url.rfind("redis", 0) == 0) {
            auto origin = remote::redis_origin(url, service::remote_settings(config));
            out.push_back({"backend " + shown(url), origin ? *origin : origin.error().message,
                           static_cast<bool>(origin)});
        }
        Config one = config;
        one.remote_urls = {url};
        auto client = service::open_remote(one);
        if (!client) {
            out.push_back({shown(url), shown(client.error().message), false});
            continue;
        }
        for (const remote::ProbeLine& l : (*client)->probe()) {
            out.push_back({l.what + " " + shown(url), shown(l.detail), l.ok});
        }
        if ((*client)->settings().access == remote::Access::read_only) {
            out.push_back({"PUT " + shown(url), "not tried: read-only client", true});
        }
    }
    return out;
}

}  // namespace kcache::cli
