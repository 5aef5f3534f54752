// The HTTP backend on a strict WebDAV server, a real Apache httpd with
// mod_dav started by each test: a PUT into a collection that does not exist
// gets 409, so the backend makes the collections (MKCOL) top down, once per
// process, and puts again; writers racing through the same new collections
// all succeed.

#include <gtest/gtest.h>

#include <thread>

#include "apache_server.hpp"
#include "backend.hpp"
#include "kcache/remote/remote.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

// The HTTP backend for `s` (it cannot fail to be made).
std::unique_ptr<remote::Backend> http_backend(const remote::Settings& s) {
    auto made = remote::make_http(s, "");
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
