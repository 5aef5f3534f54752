// S3 credentials and region, looked up as AWS's own tools do, with kcache's
// setting first. The credentials file is AWS's format:
//   file    := line*
//   line    := blank | ('#' | ';') comment | '[' profile ']' | key ws* '=' ws* value
//   key     := aws_access_key_id | aws_secret_access_key | aws_session_token | other
// Keys of other names (region, output, …) are ignored; a line that is none
// of these is an error naming the file and line. The secret is never put
// into a message.

#include <cstdlib>
#include <sstream>

#include "kcache/common/read_file.hpp"
#include "kcache/remote/schemes.hpp"
#include "s3.hpp"

namespace kcache::remote {
namespace {

// A credentials file is a few profiles; anything larger is not one.
constexpr std::size_t kMaxCredentialsBytes = 256 * 1024;

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    const auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The keys of `profile` in the credentials file `file`; nullopt when the
// file has no such profile.
Result<std::optional<S3Credentials>, RemoteError> read_profile(const std::filesystem::path& file,
                                                               const std::string& profile) {
    auto text = read_regular_file(file, kMaxCredentialsBytes);
    if (!text) {
        return config_error("S3 credentials file: " + text.error().message);
    }
    std::istringstream in(*text);
    std::optional<S3Credentials> out;
    bool inside = false;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        const std::string t = trim(line);
        if (t.empty() || t[0] == '#' || t[0] == ';') {
            continue;
        }
        const std::string where = file.string() + ":" + std::to_string(n) + ": ";
        if (t.front() == '[') {
            if (t.back() != ']') {
                return config_error(where + "expected [profile]");
            }
            inside = trim(t.substr(1, t.size() - 2)) == profile;
            if (inside && !out) {
                out.emplace();
            }
            continue;
        }
        const auto eq = t.find('=');
        if (eq == std::string::npos) {
            return config_error(where + "expected `key = value` or [profile]");
        }
        if (!inside) {
            continue;
        }
        const std::string key = trim(t.substr(0, eq));
        const std::string value = trim(t.substr(eq + 1));
        if (key == "aws_access_key_id") {
            out->access_key_id = value;
        } else if (key == "aws_secret_access_key") {
            out->secret = value;
        } else if (key == "aws_session_token") {
            out->session_token = value;
        }
    }
    return out;
}

// The credentials of `profile` in `file`, whose origin names both; a config
// error when the profile is missing or lacks a key.
Result<S3Credentials, RemoteError> from_file(const std::filesystem::path& file,
                                             const std::string& profile) {
    auto found = read_profile(file, profile);
    if (!found) {
        return fail(found.error());
    }
    if (!*found) {
        return config_error("S3 credentials file " + file.string() + " has no profile [" + profile +
                            "]");
    }
    S3Credentials c = std::move(**found);
    if (c.access_key_id.empty() || c.secret.empty()) {
        return config_error("S3 credentials file " + file.string() + ", profile [" + profile +
                            "]: expected aws_access_key_id and aws_secret_access_key");
    }
    c.file = file;
    c.origin = c.access_key_id + " from " + file.string() + " [" + profile + "]" +
               (c.session_token.empty() ? "" : " with a session token");
    return c;
}

std::string profile_of(const S3Settings& settings) {
    if (!settings.profile.empty()) {
        return settings.profile;
    }
    const std::string p = env("AWS_PROFILE");
    return p.empty() ? "default" : p;
}

// AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials; empty without HOME.
std::filesystem::path shared_file() {
    if (const std::string f = env("AWS_SHARED_CREDENTIALS_FILE"); !f.empty()) {
        return f;
    }
    const std::string home = env("HOME");
    return home.empty() ? std::filesystem::path()
                        : std::filesystem::path(home) / ".aws/credentials";
}

// Visible ASCII only: the key id and the token go into headers.
bool header_safe(const std::string& s) {
    for (const char c : s) {
        if (c <= ' ' || c > '~') {
            return false;
        }
    }
    return true;
}

Result<S3Credentials, RemoteError> look_up(const S3Settings& settings);

}  // namespace

Result<S3Credentials, RemoteError> find_s3_credentials(const S3Settings& settings) {
    auto c = look_up(settings);
    if (c && (!header_safe(c->access_key_id) || !header_safe(c->session_token))) {
        return config_error(
            "S3 credentials: the access key id or session token has a space or "
            "a control character");
    }
    return c;
}

namespace {

Result<S3Credentials, RemoteError> look_up(const S3Settings& settings) {
    const std::string profile = profile_of(settings);
    if (!settings.credentials_file.empty()) {
        return from_file(settings.credentials_file, profile);
    }
    const std::string id = env("AWS_ACCESS_KEY_ID");
    const std::string secret = env("AWS_SECRET_ACCESS_KEY");
    if (!id.empty() || !secret.empty()) {
        if (id.empty() || secret.empty()) {
            return config_error(std::string("S3 credentials: ") +
                                (id.empty() ? "AWS_SECRET_ACCESS_KEY is set without "
                                              "AWS_ACCESS_KEY_ID"
                                            : "AWS_ACCESS_KEY_ID is set without "
                                              "AWS_SECRET_ACCESS_KEY"));
        }
        S3Credentials c{id, secret, env("AWS_SESSION_TOKEN"), "", {}};
        c.origin = id + " from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY" +
                   (c.session_token.empty() ? "" : ", AWS_SESSION_TOKEN") + ")";
        return c;
    }
    const std::filesystem::path file = shared_file();
    std::error_code ec;
    if (!file.empty() && std::filesystem::exists(file, ec)) {
        return from_file(file, profile);
    }
    return config_error(
        "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the "
        "URL's credentials_file attribute, or write " +
        (file.empty() ? std::string("~/.aws/credentials") : file.string()) + " (profile [" +
        profile + "])");
}

}  // namespace

std::string s3_region(const S3Settings& settings) {
    for (const std::string& r : {settings.region, env("AWS_REGION"), env("AWS_DEFAULT_REGION")}) {
        if (!r.empty()) {
            return r;
        }
    }
    return "us-east-1";
}

Result<std::string, RemoteError> s3_credentials_origin(const std::string& url,
                                                       const S3Settings& defaults) {
    const auto [base, attributes] = split_attributes(url);
    auto settings = s3_settings_of(base, attributes, defaults);
    if (!settings) {
        return fail(settings.error());
    }
    auto c = find_s3_credentials(*settings);
    if (!c) {
        return fail(c.error());
    }
    return c->origin;
}

}  // namespace kcache::remote
