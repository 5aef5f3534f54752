#pragma once
// A small HTTP client over libcurl: GET (capped), HEAD, PUT, DELETE and MKCOL on one
// URL, with the settings' timeouts, TLS trust, redirect limit and
// credentials. Easy handles are pooled so connections are reused. Internal.

#include <curl/curl.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "kcache/remote/remote.hpp"

namespace kcache::remote {

enum class Method { get, head, put, del, mkcol };

// "GET", "HEAD", "PUT", "DELETE" or "MKCOL".
const char* method_name(Method m);

struct Response {
    long status = 0;
    store::Bytes body;
    std::chrono::seconds retry_after{0};  // the Retry-After header; 0 when absent
};

struct EasyDeleter {
    void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;

struct SlistDeleter {
    void operator()(curl_slist* s) const { curl_slist_free_all(s); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

class Http {
  public:
    // `token` is sent as a bearer token (the caller checked the scheme).
    Http(const Settings& settings, std::string token);

    // Performs one request on `url`; a response of any status, or a typed
    // transport error (timeout, unreachable, tls, redirects, too_large, transport).
    Result<Response, RemoteError> perform(Method method, const std::string& url,
                                          std::span<const std::uint8_t> body = {});

  private:
    EasyHandle take();
    void give_back(EasyHandle h);
    Slist headers(Method method) const;

    const Settings& settings_;
    std::string token_;
    std::mutex mu_;
    std::vector<EasyHandle> idle_;
};

}  // namespace kcache::remote
