// The HTTP(S) backend: each request is one libcurl request (http.cpp), and
// its status decides the reply: 200 for get and head, 200/201/204 for put,
// 200/204 for remove; 404 is not_found, any other status an http_status
// failure that keeps the status and Retry-After for the breaker.

#include <algorithm>
#include <initializer_list>

#include "backend.hpp"
#include "http.hpp"

namespace kcache::remote {
namespace {

class HttpBackend final : public Backend {
  public:
    HttpBackend(const Settings& settings, const std::string& token) : http_(settings, token) {}

    Result<Reply, Failure> get(const std::string& url) override {
        return send(Method::get, url, {}, {200});
    }
    Result<Reply, Failure> head(const std::string& url) override {
        return send(Method::head, url, {}, {200});
    }
    Result<Reply, Failure> put(const std::string& url,
                               std::span<const std::uint8_t> object) override {
        return send(Method::put, url, object, {200, 201, 204});
    }
    Result<Reply, Failure> remove(const std::string& url) override {
        return send(Method::del, url, {}, {200, 204});
    }

  private:
    // One request; a reply when its status is one of `ok`.
    Result<Reply, Failure> send(Method m, const std::string& url,
                                std::span<const std::uint8_t> body,
                                std::initializer_list<long> ok) {
        auto r = http_.perform(m, url, body);
        if (!r) {
            return fail(Failure{r.error()});
        }
        if (std::find(ok.begin(), ok.end(), r->status) != ok.end()) {
            return Reply{r->status, std::move(r->body)};
        }
        const RemoteErrc code = r->status == 404 ? RemoteErrc::not_found : RemoteErrc::http_status;
        return fail(Failure{RemoteError{code, std::string(method_name(m)) + " " + url + ": HTTP " +
                                                  std::to_string(r->status)},
                            r->status, r->retry_after});
    }

    Http http_;
};

}  // namespace

std::unique_ptr<Backend> make_http(const Settings& settings, const std::string& token) {
    return std::make_unique<HttpBackend>(settings, token);
}

}  // namespace kcache::remote
