#pragma once
// A small HTTP client over libcurl (loaded at first use, curl_api.hpp): GET (capped), HEAD, PUT,
// DELETE and MKCOL on one URL, with the settings' timeouts, TLS trust, redirect limit and
// credentials, or signed with AWS Signature Version 4 (the S3 backend).
// Easy handles are pooled so connections are reused. Internal.

#include <curl/curl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "backend.hpp"
#include "credential.hpp"
#include "curl_api.hpp"
#include "kcache/remote/remote.hpp"
#include "preconnect.hpp"

namespace kcache::remote {

enum class Method { get, head, put, del, mkcol, propfind };

// "GET", "HEAD", "PUT", "DELETE", "MKCOL" or "PROPFIND".
const char* method_name(Method m);

struct Response {
    long status = 0;
    store::Bytes body;
    std::chrono::seconds retry_after{0};  // the Retry-After header; 0 when absent
};

// Handles exist only once libcurl is loaded (curl_api.hpp).
struct EasyDeleter {
    void operator()(CURL* c) const { curl_api()->easy_cleanup(c); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;

struct SlistDeleter {
    void operator()(curl_slist* s) const { curl_api()->slist_free_all(s); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

// The AWS Signature Version 4 of a request. libcurl computes it
// (CURLOPT_AWS_SIGV4) over the method, path, the Host header, every header
// the request adds (RequestAuth::headers) and the payload hash that
// x-amz-content-sha256 names; the secret itself is never sent.
struct SigV4 {
    std::string region;   // "us-east-1"
    std::string service;  // "s3"
    std::string access_key_id;
    std::string secret;
};

// Sets `handle` to sign its request with `sig` (CURLOPT_AWS_SIGV4, the key id
// and secret as its user and password).
void apply_sigv4(CURL* handle, const SigV4& sig);

// What one request adds to the settings' own credentials.
struct RequestAuth {
    const SigV4* sigv4 = nullptr;      // sign the request; no bearer token or netrc then
    std::vector<std::string> headers;  // "Name: value", sent (and signed under sigv4)
};

class Http {
  public:
    // The credential's secret is sent as a bearer token (the caller checked
    // the scheme); nullptr or none configured: no token.
    Http(const Settings& settings, std::shared_ptr<Credential> credential);
    ~Http();
    Http(const Http&) = delete;
    Http& operator=(const Http&) = delete;

    // Performs one request on `url`; a response of any status, or a typed
    // transport error (timeout, unreachable, tls, redirects, too_large, transport).
    // A connection opened by preconnect() that the server closed as the
    // request went out is no error: the request is sent once more. So is a
    // request whose bearer token was refused (401, 403) when the
    // credential then gives another (a rotated token).
    Result<Response, RemoteError> perform(Method method, const std::string& url,
                                          std::span<const std::uint8_t> body = {},
                                          const RequestAuth& auth = {});
    // Opens a TCP connection to the server of `url` for the first request
    // to it (ParkedSockets::connect; TLS is left to that request).
    // False when no connection could be opened.
    bool preconnect(const std::string& url, const std::atomic<bool>& stop);

    struct Handoff;  // a parked connection offered to one request (http.cpp)

  private:
    // perform() with `token` (none: ""), on a parked connection if any.
    Result<Response, RemoteError> perform_as(Method method, const std::string& url,
                                             std::span<const std::uint8_t> body,
                                             const RequestAuth& auth, const std::string& token);
    Result<Response, RemoteError> perform_once(Method method, const std::string& url,
                                               std::span<const std::uint8_t> body,
                                               const RequestAuth& auth, const std::string& token,
                                               Handoff& handoff, CURLcode& rc);
    EasyHandle take();
    void give_back(EasyHandle h);
    Slist headers(Method method, const RequestAuth& auth, const std::string& token) const;

    const Settings& settings_;
    std::shared_ptr<Credential> credential_;  // nullptr: no token
    // Forgets idle handles a forked child inherited (under mu_): each holds
    // a connection of its parent's, which the child must not share.
    void drop_if_forked();

    std::mutex mu_;
    std::vector<EasyHandle> idle_;
    pid_t idle_owner_ = ::getpid();  // the process whose handles idle_ holds
    ParkedSockets parked_;
};

// The reply of a request whose status is one of `ok`; otherwise a failure:
// not_found for 404, http_status (with the status and Retry-After) for any
// other status, the transport's error when nothing came back (http_backend.cpp).
Result<Reply, Failure> reply_of(Method m, const std::string& url, Result<Response, RemoteError> r,
                                std::initializer_list<long> ok);

}  // namespace kcache::remote
