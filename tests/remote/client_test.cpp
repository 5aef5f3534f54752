// The remote client against a real nginx (WebDAV PUT) started by the test:
// round trips, every fault in an object, refused writes, read-only clients.

#include <gtest/gtest.h>

#include <fstream>

#include "kcache/remote/remote.hpp"
#include "remote_support.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

using remote::RemoteErrc;

class RemoteClient : public RemoteServerTest {
  protected:
    using RemoteServerTest::client;
    std::unique_ptr<remote::Client> client() {
        return client(test_settings(server_->url(), dir() / "state"));
    }
    // Uploads made-up entry `n` and returns its object file on the server.
    std::filesystem::path uploaded(remote::Client& c, int n) {
        auto up = c.upload(made_up_fields(n), made_up_bytes(n), made_up_provenance());
        EXPECT_TRUE(up) << up.error().message;
        return server_->object_file(store::make_key(made_up_fields(n)).hex());
    }
    RemoteErrc fetch_error(remote::Client& c, int n) {
        auto got = c.fetch(made_up_fields(n));
        EXPECT_FALSE(got);
        return got ? RemoteErrc::transport : got.error().code;
    }
};

TEST_F(RemoteClient, UploadThenFetchIsAVerifiedRoundTrip) {
    auto c = client();
    const auto file = uploaded(*c, 1);
    EXPECT_TRUE(std::filesystem::exists(file)) << file;  // <base>/kcache/v1/<2 hex>/<key>
    auto got = c->fetch(made_up_fields(1));
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->bytes, made_up_bytes(1));
    EXPECT_EQ(got->provenance.producer_version, "kcache-test 0.1");
    auto present = c->exists(store::make_key(made_up_fields(1)));
    ASSERT_TRUE(present);
    EXPECT_TRUE(*present);
    const auto n = c->counters();
    EXPECT_EQ(n.hits, 1u);
    EXPECT_EQ(n.uploads, 1u);
    EXPECT_EQ(server_->count("PUT"), 1u);
    EXPECT_EQ(server_->count("HEAD"), 1u);
}

TEST_F(RemoteClient, MissingObjectIsACountedMissNotAnError) {
    auto c = client();
    EXPECT_EQ(fetch_error(*c, 2), RemoteErrc::not_found);
    auto present = c->exists(store::make_key(made_up_fields(2)));
    ASSERT_TRUE(present);
    EXPECT_FALSE(*present);
    EXPECT_EQ(c->counters().misses, 1u);
    EXPECT_EQ(c->counters().errors, 0u);
    EXPECT_EQ(fetch_error(*c, 2), RemoteErrc::not_found);  // a 404 does not open the breaker
}

TEST_F(RemoteClient, FlippedByteOnTheServersDiskIsRefused) {
    auto c = client();
    flip_byte_from_end(uploaded(*c, 3), 10);  // inside the compressed payload
    EXPECT_EQ(fetch_error(*c, 3), RemoteErrc::corrupt);
    flip_byte(uploaded(*c, 4), 40);  // inside the key fields
    EXPECT_EQ(fetch_error(*c, 4), RemoteErrc::wrong_key);
    EXPECT_EQ(c->counters().corrupt, 2u);
    EXPECT_EQ(c->counters().hits, 0u);
}

TEST_F(RemoteClient, ObjectCopiedUnderAnotherKeyIsRefused) {
    auto c = client();
    const auto source = uploaded(*c, 5);
    const auto target = server_->object_file(store::make_key(made_up_fields(6)).hex());
    std::filesystem::create_directories(target.parent_path());
    std::filesystem::copy_file(source, target);
    EXPECT_EQ(fetch_error(*c, 6), RemoteErrc::wrong_key);
    EXPECT_EQ(c->counters().corrupt, 1u);
}

TEST_F(RemoteClient, TruncatedObjectIsRefused) {
    auto c = client();
    const auto file = uploaded(*c, 7);
    std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);
    EXPECT_EQ(fetch_error(*c, 7), RemoteErrc::corrupt);
    std::filesystem::resize_file(file, 0);
    EXPECT_EQ(fetch_error(*c, 7), RemoteErrc::corrupt);
}

TEST_F(RemoteClient, ObjectOverTheCapIsRefusedWhileDownloading) {
    auto s = test_settings(server_->url(), dir() / "state");
    s.max_object_bytes = 16 * 1024;
    auto c = client(s);
    const auto file = server_->object_file(store::make_key(made_up_fields(8)).hex());
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << std::string(1 << 20, 'x');
    EXPECT_EQ(fetch_error(*c, 8), RemoteErrc::too_large);
    EXPECT_EQ(c->counters().corrupt, 1u);
    // An upload over the cap is refused before it is sent.
    auto up = c->upload(made_up_fields(9), made_up_bytes(9, 1 << 20), made_up_provenance());
    ASSERT_FALSE(up);
    EXPECT_EQ(up.error().code, RemoteErrc::too_large);
    EXPECT_EQ(server_->count("PUT"), 0u);
}

TEST_F(RemoteClient, ServerErrorIsCountedAndOpensTheBreaker) {
    auto c = client(test_settings(server_->broken_url(), dir() / "state"));
    EXPECT_EQ(fetch_error(*c, 10), RemoteErrc::http_status);
    EXPECT_EQ(c->counters().errors, 1u);
    EXPECT_EQ(fetch_error(*c, 11), RemoteErrc::breaker_open);  // no request sent
    EXPECT_EQ(server_->requests().size(), 1u);
    EXPECT_TRUE(
        std::filesystem::exists(breaker_file(dir() / "state", "down", server_->broken_url())));
}

TEST_F(RemoteClient, RedirectLoopIsCutShort) {
    auto c = client(test_settings(server_->loop_url(), dir() / "state"));
    EXPECT_EQ(fetch_error(*c, 12), RemoteErrc::redirects);
    EXPECT_EQ(c->counters().errors, 1u);
    EXPECT_LE(server_->requests().size(), 4u);  // the first request and 3 redirects
}

TEST_F(RemoteClient, ReadOnlyClientNeverSendsPut) {
    auto s = test_settings(server_->url(), dir() / "state");
    s.access = remote::Access::read_only;
    auto c = client(s);
    auto up = c->upload(made_up_fields(13), made_up_bytes(13), made_up_provenance());
    ASSERT_FALSE(up);
    EXPECT_EQ(up.error().code, RemoteErrc::read_only);
    c->enqueue(made_up_fields(14), made_up_bytes(14), made_up_provenance());
    EXPECT_EQ(c->flush(std::chrono::seconds(5)), 0u);
    for (const auto& line : c->probe()) {
        EXPECT_TRUE(line.what == "GET" || line.what == "HEAD") << line.what;
        EXPECT_TRUE(line.ok) << line.detail;
    }
    EXPECT_EQ(server_->count("PUT"), 0u);
    EXPECT_EQ(server_->count("DELETE"), 0u);
}

TEST_F(RemoteClient, RefusedWriteIsCountedNotFatal) {
    server_.reset();
    NginxOptions read_only;
    read_only.read_only = true;
    server_ = start_nginx(dir() / "nginx-ro", read_only);
    ASSERT_TRUE(server_);
    auto c = client();
    auto up = c->upload(made_up_fields(15), made_up_bytes(15), made_up_provenance());
    ASSERT_FALSE(up);
    EXPECT_EQ(up.error().code, RemoteErrc::http_status);
    EXPECT_EQ(c->counters().upload_failures, 1u);
    EXPECT_EQ(fetch_error(*c, 15), RemoteErrc::not_found);  // reads still work
    auto probe = c->probe();
    ASSERT_EQ(probe.size(), 3u);  // GET, HEAD, and the refused PUT (no DELETE after it)
    EXPECT_TRUE(probe[0].ok && probe[1].ok);
    EXPECT_FALSE(probe[2].ok);
}

TEST_F(RemoteClient, WriterProbePutsAndDeletesItsObject) {
    auto c = client();
    auto probe = c->probe();
    ASSERT_EQ(probe.size(), 4u);
    for (const auto& line : probe) {
        EXPECT_TRUE(line.ok) << line.what << ": " << line.detail;
    }
    EXPECT_EQ(server_->count("PUT"), 1u);
    EXPECT_EQ(server_->count("DELETE"), 1u);
}

TEST_F(RemoteClient, BackgroundQueueIsFlushed) {
    auto c = client();
    for (int n = 20; n < 30; ++n) {
        c->enqueue(made_up_fields(n), made_up_bytes(n), made_up_provenance());
    }
    EXPECT_EQ(c->flush(std::chrono::seconds(30)), 0u);
    EXPECT_EQ(c->counters().uploads, 10u);
    EXPECT_EQ(server_->count("PUT"), 10u);
    for (int n = 20; n < 30; ++n) {
        EXPECT_TRUE(c->fetch(made_up_fields(n))) << n;
    }
}

TEST_F(RemoteClient, TokenIsNeverSentOverPlainHttpUnlessAllowed) {
    std::ofstream(dir() / "token") << "s3cret\n";
    auto s = test_settings(server_->url(), dir() / "state");
    s.token_file = dir() / "token";
    auto refused = remote::Client::open(s);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, RemoteErrc::config);
    s.plain_http_token = remote::PlainHttpToken::allow;
    auto c = client(s);
    EXPECT_EQ(fetch_error(*c, 31), RemoteErrc::not_found);
    s.token_file = dir() / "no-such-token";
    EXPECT_FALSE(remote::Client::open(s));
}

TEST_F(RemoteClient, CountersAccumulateInTheStatsFile) {
    {
        auto c = client();
        (void)uploaded(*c, 32);
        EXPECT_TRUE(c->fetch(made_up_fields(32)));
    }
    {
        auto c = client();
        EXPECT_TRUE(c->fetch(made_up_fields(32)));
        EXPECT_FALSE(c->fetch(made_up_fields(33)));
    }
    const auto total = remote::read_stats_file(dir() / "state");
    EXPECT_EQ(total.hits, 2u);
    EXPECT_EQ(total.misses, 1u);
    EXPECT_EQ(total.uploads, 1u);
}

TEST_F(RemoteClient, KeysAreShardedByRendezvousHashing) {
    auto second = start_nginx(dir() / "nginx2");
    ASSERT_TRUE(second);
    auto s = test_settings(server_->url(), dir() / "state");
    s.base_urls.push_back(second->url());
    auto c = client(s);
    auto single = client(test_settings(server_->url(), dir() / "state1"));
    for (int n = 40; n < 60; ++n) {
        (void)uploaded(*c, n);
        const auto key = store::make_key(made_up_fields(n));
        const bool on_first = std::filesystem::exists(server_->object_file(key.hex()));
        EXPECT_NE(on_first, std::filesystem::exists(second->object_file(key.hex()))) << n;
        EXPECT_EQ(on_first, c->shard_for(key) == server_->url()) << n;
        EXPECT_TRUE(c->fetch(made_up_fields(n))) << n;
    }
    EXPECT_GT(server_->count("PUT"), 2u);  // both servers take a share of 20 keys
    EXPECT_GT(second->count("PUT"), 2u);
}

}  // namespace
}  // namespace kcache::test
