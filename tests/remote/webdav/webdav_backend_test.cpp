// The HTTP backend on a strict WebDAV server, a real Apache httpd with
// mod_dav started by each test: a PUT into a collection that does not exist
// gets 409, so the backend makes the collections (MKCOL) top down, once per
// process, and puts again; writers racing through the same new collections
// all succeed. The same on nginx without create_full_put_path, and a clear
// error where the server makes no collection at all.

#include <gtest/gtest.h>

#include <thread>

#include "apache_server.hpp"
#include "backend.hpp"
#include "credential.hpp"
#include "kcache/remote/remote.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

// The HTTP backend for `s` (it cannot fail to be made).
std::unique_ptr<remote::Backend> http_backend(const remote::Settings& s) {
    auto made = remote::make_backend(s, *remote::Credential::open(s));
    return made ? std::move(*made) : nullptr;
}

class HttpBackendOnApache : public TempDirTest {};

TEST_F(HttpBackendOnApache, MakesMissingCollectionsOnceThenPutsOnce) {
    auto server = ApacheServer::start(dir() / "apache");
    ASSERT_TRUE(server) << server.error();
    const remote::Settings s = test_settings(server->url(), dir() / "state");
    auto backend = http_backend(s);
    const std::string base = server->url() + "/kcache/v1/";
    const store::Bytes object{5, 6, 7};

    // A 409, then MKCOL kcache/, kcache/v1/, kcache/v1/ab/, then the PUT again.
    auto put = backend->put(base + "ab/one", object);
    ASSERT_TRUE(put) << put.error().error.message;
    EXPECT_EQ(server->count("MKCOL"), 3u);
    EXPECT_EQ(server->count("PUT"), 2u);
    auto got = backend->get(base + "ab/one");
    ASSERT_TRUE(got) << got.error().error.message;
    EXPECT_EQ(got->body, object);
    // Into a collection known to exist: one PUT.
    ASSERT_TRUE(backend->put(base + "ab/two", object));
    EXPECT_EQ(server->count("PUT"), 3u);
    // A new <2 hex>/: one MKCOL, the parents above it are known.
    ASSERT_TRUE(backend->put(base + "cd/three", object));
    EXPECT_EQ(server->count("MKCOL"), 4u);
    EXPECT_EQ(server->count("PUT"), 5u);
    // Another writer (knowing nothing) making a new <2 hex>/ meets the
    // parents made by the first: 405 for them is fine.
    auto other = http_backend(s)->put(base + "ef/four", object);
    ASSERT_TRUE(other) << other.error().error.message;
    EXPECT_EQ(server->count("MKCOL"), 7u);
    EXPECT_EQ(server->count("PUT"), 7u);
    EXPECT_TRUE(backend->get(base + "ef/four"));
}

TEST_F(HttpBackendOnApache, WritersMakingTheSameCollectionsAtOnceAllSucceed) {
    auto server = ApacheServer::start(dir() / "apache");
    ASSERT_TRUE(server) << server.error();
    const remote::Settings s = test_settings(server->url(), dir() / "state");
    // Each round races its writers through a fresh tree of collections: a
    // MKCOL that loses the race for a directory may be refused (Apache: 403)
    // although the collection is there.
    constexpr int kRounds = 12;
    constexpr int kWriters = 8;
    for (int round = 0; round < kRounds; ++round) {
        const std::string tree = "r" + std::to_string(round) + "/kcache/v1/aa/";
        std::vector<std::string> errors(kWriters);
        std::vector<std::thread> writers;
        for (int w = 0; w < kWriters; ++w) {
            writers.emplace_back([&, w] {
                auto backend = http_backend(s);  // each its own writer, knowing nothing
                auto put = backend->put(server->url() + "/" + tree + std::to_string(w),
                                        store::Bytes{static_cast<std::uint8_t>(w)});
                errors[w] = put ? "" : put.error().error.message;
            });
        }
        for (std::thread& t : writers) {
            t.join();
        }
        for (int w = 0; w < kWriters; ++w) {
            EXPECT_EQ(errors[w], "") << "round " << round << ", writer " << w;
            EXPECT_TRUE(std::filesystem::exists(server->root() / tree / std::to_string(w)));
        }
    }
}

}  // namespace
}  // namespace kcache::test

namespace kcache::test {
namespace {

// nginx without create_full_put_path: a PUT into a missing directory gets
// 500 (nginx 1.22 writes the body to a temporary file, and its rename into
// the missing directory fails); with MKCOL enabled the backend makes the
// collections, without it the upload fails with a message that says why.
class HttpBackendOnNginx : public TempDirTest {
  protected:
    std::optional<NginxServer> start(bool mkcol) {
        NginxOptions o;
        o.create_full_put_path = false;
        o.mkcol = mkcol;
        return start_nginx(dir() / "nginx", o);
    }
};

TEST_F(HttpBackendOnNginx, WithoutCreateFullPutPathTheCollectionsAreMadeWithMkcol) {
    auto server = start(true);
    ASSERT_TRUE(server);
    auto c = remote::Client::open(test_settings(server->url(), dir() / "state"));
    ASSERT_TRUE(c) << c.error().message;
    for (int n = 0; n < 3; ++n) {
        auto up = (*c)->upload(made_up_fields(n), made_up_bytes(n), made_up_provenance());
        ASSERT_TRUE(up) << n << ": " << up.error().message;
        EXPECT_TRUE(
            std::filesystem::exists(server->object_file(store::make_key(made_up_fields(n)).hex())));
    }
    EXPECT_GE(server->count("MKCOL"), 3u);  // kcache/ (there: 405), v1/, and a <2 hex>/ each
    for (int n = 0; n < 3; ++n) {
        EXPECT_TRUE((*c)->fetch(made_up_fields(n))) << n;
    }
}

TEST_F(HttpBackendOnNginx, AServerThatMakesNoCollectionIsAClearCountedError) {
    auto server = start(false);
    ASSERT_TRUE(server);
    auto c = remote::Client::open(test_settings(server->url(), dir() / "state"));
    ASSERT_TRUE(c) << c.error().message;
    auto up = (*c)->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance());
    ASSERT_FALSE(up);
    const std::string& why = up.error().message;
    EXPECT_EQ(up.error().code, remote::RemoteErrc::http_status);
    EXPECT_NE(why.find(server->url() + "/kcache/v1/"), std::string::npos) << why;
    EXPECT_NE(why.find("HTTP 500"), std::string::npos) << why;
    EXPECT_NE(why.find("MKCOL of its collections made none"), std::string::npos) << why;
    EXPECT_EQ((*c)->counters().upload_failures, 1u);
    EXPECT_EQ(server->count("MKCOL"), 3u);  // each asked once, each answered 405
}

}  // namespace
}  // namespace kcache::test
