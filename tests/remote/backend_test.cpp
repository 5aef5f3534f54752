// The remote backend seam: the scheme table (an unknown scheme is a
// configuration error naming the supported ones) and the HTTP backend's
// typed answers against a real nginx started by the test.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "backend.hpp"
#include "credential.hpp"
#include "kcache/remote/remote.hpp"
#include "kcache/remote/schemes.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

using remote::RemoteErrc;

TEST(RemoteBackends, SchemesComeFromTheOneTable) {
    const std::vector<std::string> schemes = remote::supported_schemes();
    for (const char* scheme : {"http", "https", "s3"}) {
        EXPECT_NE(std::find(schemes.begin(), schemes.end(), scheme), schemes.end()) << scheme;
        EXPECT_NE(remote::supported_scheme_list().find(std::string(scheme) + "://"),
                  std::string::npos);
    }
    EXPECT_EQ(remote::supported_scheme_list().rfind("http://, https://", 0), 0u);
    EXPECT_TRUE(remote::scheme_supported("https://cache.example/kc"));
    EXPECT_TRUE(remote::scheme_supported("s3://bucket/kc"));
    EXPECT_FALSE(remote::scheme_supported("ftp://cache.example/kc"));
    EXPECT_FALSE(remote::scheme_supported("httpx://cache.example"));
    EXPECT_FALSE(remote::scheme_supported("cache.example/http://"));
}

TEST(RemoteBackends, AnUnknownSchemeIsAConfigErrorNamingTheSupportedOnes) {
    remote::Settings s;
    s.base_urls = {"https://a.example/kc", "ftp://files.example/kc"};
    auto c = remote::Client::open(s);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, RemoteErrc::config);
    EXPECT_NE(c.error().message.find("ftp://files.example/kc"), std::string::npos)
        << c.error().message;
    EXPECT_NE(c.error().message.find("http://, https://"), std::string::npos) << c.error().message;
}

// The HTTP backend for `s` (it cannot fail to be made).
std::unique_ptr<remote::Backend> http_backend(const remote::Settings& s) {
    auto made = remote::make_backend(s, *remote::Credential::open(s));
    return made ? std::move(*made) : nullptr;
}

class HttpBackend : public RemoteServerTest {};

// Whether libcurl is mapped into this process.
bool libcurl_loaded() {
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
        if (line.find("/libcurl") != std::string::npos) {
            return true;
        }
    }
    return false;
}

// libcurl (and what it pulls in) is loaded by the first HTTP request, not
// with the library: an application that loads libkcache mid-run (the OpenCL
// layer) and has no HTTP remote never loads it.
TEST_F(HttpBackend, LibcurlIsLoadedByTheFirstRequestNotBefore) {
    ASSERT_FALSE(libcurl_loaded()) << "loaded with the library (or the test links it)";
    const remote::Settings s = test_settings(server_->url(), dir() / "state");
    auto backend = http_backend(s);
    ASSERT_TRUE(backend);
    EXPECT_FALSE(libcurl_loaded()) << "loaded by making the backend";
    auto absent = backend->get(server_->url() + "/kcache/v1/ab/none");
    ASSERT_FALSE(absent);
    EXPECT_EQ(absent.error().error.code, RemoteErrc::not_found);
    EXPECT_TRUE(libcurl_loaded());
}

TEST_F(HttpBackend, AnswersEachRequestWithAReplyOrATypedFailure) {
    const remote::Settings s = test_settings(server_->url(), dir() / "state");
    auto backend = http_backend(s);
    const std::string url = server_->url() + "/kcache/v1/ab/object";
    const store::Bytes object{1, 2, 3, 4};

    auto absent = backend->get(url);
    ASSERT_FALSE(absent);
    EXPECT_EQ(absent.error().error.code, RemoteErrc::not_found);
    EXPECT_EQ(absent.error().status, 404);
    auto put = backend->put(url, object);
    ASSERT_TRUE(put) << put.error().error.message;
    auto got = backend->get(url);
    ASSERT_TRUE(got) << got.error().error.message;
    EXPECT_EQ(got->status, 200);
    EXPECT_EQ(got->body, object);
    EXPECT_TRUE(backend->head(url));
    EXPECT_TRUE(backend->remove(url));
    auto gone = backend->head(url);
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().error.code, RemoteErrc::not_found);

    EXPECT_EQ(server_->count("MKCOL"), 0u);  // nginx makes the path itself

    auto broken = backend->get(server_->broken_url() + "/kcache/v1/ab/object");
    ASSERT_FALSE(broken);
    EXPECT_EQ(broken.error().error.code, RemoteErrc::http_status);
    EXPECT_EQ(broken.error().status, 500);
    auto busy = backend->put(server_->busy_url() + "/kcache/v1/ab/object", object);
    ASSERT_FALSE(busy);
    EXPECT_EQ(busy.error().status, 429);
    EXPECT_EQ(busy.error().retry_after, std::chrono::seconds(120));
}

TEST_F(HttpBackend, NothingListeningIsUnreachableWithoutAStatus) {
    const std::string url = server_->url();
    server_->stop();
    const remote::Settings s = test_settings(url, dir() / "state");
    auto got = http_backend(s)->get(url + "/kcache/v1/ab/object");
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().error.code, RemoteErrc::unreachable);
    EXPECT_EQ(got.error().status, 0);
    EXPECT_NE(got.error().error.message.find("GET " + url), std::string::npos)
        << got.error().error.message;
}

}  // namespace
}  // namespace kcache::test
