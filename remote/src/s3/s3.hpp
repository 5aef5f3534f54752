#pragma once
// The S3 backend's parts: the credentials that sign its requests and where
// they came from (s3_credentials.cpp), and how an s3:// object URL becomes
// the endpoint's http(s) URL (s3_backend.cpp). Internal.

#include <mutex>
#include <string>

#include "backend.hpp"
#include "http/http.hpp"
#include "kcache/common/file_stamp.hpp"
#include "kcache/remote/remote.hpp"

namespace kcache::remote {

// An access key. `origin` says where it was found and names the key id,
// never the secret.
struct S3Credentials {
    std::string access_key_id;
    std::string secret;
    std::string session_token;  // temporary credentials (STS); empty otherwise
    std::string origin;
    std::filesystem::path file;  // the credentials file they came from; empty: the environment
};

// The credentials for `settings`: its credentials file (profile), else the
// environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, with
// AWS_SESSION_TOKEN), else AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials
// (AWS_PROFILE, else "default"); a config error naming what was looked at
// when none are found, or naming the file and line of a malformed file.
Result<S3Credentials, RemoteError> find_s3_credentials(const S3Settings& settings);

// The credentials that sign an S3 backend's requests, for a process that
// runs while they rotate: those from a credentials file are read again when
// the file changed (FileStamp, one stat() per request) and, after the server
// refused them (403, or 400 ExpiredToken), whatever its stamp; a re-read
// that fails keeps the keys read before (logged). Those from the
// environment never change. Thread-safe (s3_keys.cpp).
class S3Keys {
  public:
    S3Keys(const S3Settings& settings, S3Credentials first);
    struct Now {
        SigV4 sig;
        std::string session_token;
    };
    // The keys to sign with now.
    Now current();
    // After `refused` was refused: reads the file again; true when its keys
    // are now other ones (the request is worth sending again).
    bool refresh(const Now& refused);

  private:
    void read_locked();

    const S3Settings& settings_;
    std::mutex mu_;
    S3Credentials keys_;
    FileStamp stamp_;
    std::string region_;
};

// The region of `settings`: its own, else AWS_REGION, else
// AWS_DEFAULT_REGION, else "us-east-1".
std::string s3_region(const S3Settings& settings);

// Where s3://bucket/prefix URLs go: one bucket's endpoint and addressing.
struct S3Target {
    std::string scheme;     // "https" or "http"
    std::string authority;  // "host[:port]" of the endpoint
    bool virtual_hosted = false;
};

// The settings of the base URL `url` (without attributes): its attributes
// `attributes` (region, endpoint, url_style = path | virtual | auto,
// profile, credentials_file; "name=value&…") over `defaults`; a config
// error naming the URL for an attribute it does not take or a bad value.
Result<S3Settings, RemoteError> s3_settings_of(const std::string& url,
                                               const std::string& attributes, S3Settings defaults);

// The target of `settings` (endpoint, region, URL style); a config error for
// an endpoint that is not http(s)://host[:port].
Result<S3Target, RemoteError> s3_target(const S3Settings& settings);

// A config error unless `url` is s3://bucket[/prefix] with a bucket name S3
// accepts (3-63 of a-z 0-9 . -, starting and ending with a letter or digit)
// and a prefix of letters, digits and - _ . / (no empty or dot segment).
Status<RemoteError> check_s3_url(const std::string& url);

// The HTTP URL of the object `url` (s3://bucket/path) at `target`:
// scheme://authority/bucket/path, or scheme://bucket.authority/path (a
// path that is a query, "?…", follows the bucket without a slash).
std::string s3_http_url(const S3Target& target, const std::string& url);

}  // namespace kcache::remote
