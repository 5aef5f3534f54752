// The remote client on s3:// URLs against a real S3-protocol server, s3rver,
// started by each test on a loopback port in the test's directory and
// stopped by PID. s3rver recomputes each request's SigV4 signature with the
// secret of the key id and refuses a mismatch: so a round trip proves the
// backend's requests are signed as S3 checks them, and a wrong secret is
// refused by the server. What s3rver does not check (the body against its
// hash, which headers are signed, the region, the session token, unsigned
// requests) is listed in tests/harness/s3_server.hpp; the published
// signatures (s3_sigv4_test.cpp) cover the signing itself.

#include <gtest/gtest.h>

#include <fstream>

#include "backend.hpp"
#include "credential.hpp"
#include "kcache/store/key.hpp"
#include "remote_support.hpp"
#include "s3_server.hpp"

namespace kcache::test {
namespace {

using remote::RemoteErrc;

class RemoteS3 : public TempDirTest {
  protected:
    void start(const S3Options& options = {}) {
        auto s = S3Server::start(dir() / "s3rver", options);
        ASSERT_TRUE(s) << s.error();
        server_.emplace(std::move(*s));
    }
    // Client settings for s3://BUCKET/fleet with credentials in a file.
    remote::Settings settings(const std::string& secret = S3Server::kSecret,
                              const std::string& token = "") {
        remote::Settings s = test_settings("s3://" + server_->bucket() + "/fleet", dir() / "state");
        s.s3.endpoint = server_->endpoint();
        s.s3.credentials_file = dir() / "credentials";
        std::ofstream(s.s3.credentials_file)
            << "[default]\naws_access_key_id = " << S3Server::kAccessKeyId
            << "\naws_secret_access_key = " << secret
            << (token.empty() ? "" : "\naws_session_token = " + token) << "\n";
        return s;
    }
    std::unique_ptr<remote::Client> client(const remote::Settings& s) {
        auto c = remote::Client::open(s);
        EXPECT_TRUE(c) << c.error().message;
        return c ? std::move(*c) : nullptr;
    }
    // The object's path below the bucket.
    static std::string object_key(int n) {
        return "fleet/" + remote::object_path(store::make_key(made_up_fields(n)));
    }
    std::optional<S3Server> server_;
};

TEST_F(RemoteS3, SignedRoundTripOnePutPerObject) {
    start();
    auto c = client(settings());
    ASSERT_TRUE(c);
    for (int n = 0; n < 3; ++n) {
        auto up = c->upload(made_up_fields(n), made_up_bytes(n), made_up_provenance());
        ASSERT_TRUE(up) << up.error().message;
        EXPECT_TRUE(std::filesystem::exists(server_->object_file(object_key(n)))) << n;
    }
    EXPECT_EQ(server_->count("PUT"), 3u);  // no directories to make: one PUT each
    EXPECT_EQ(server_->count("PUT", 200), 3u);
    for (int n = 0; n < 3; ++n) {
        auto got = c->fetch(made_up_fields(n));
        ASSERT_TRUE(got) << got.error().message;
        EXPECT_EQ(got->bytes, made_up_bytes(n));
    }
    auto absent = c->fetch(made_up_fields(7));
    ASSERT_FALSE(absent);
    EXPECT_EQ(absent.error().code, RemoteErrc::not_found);
    for (const remote::ProbeLine& l : c->probe()) {  // what `kcache doctor` runs
        EXPECT_TRUE(l.ok) << l.what << ": " << l.detail;
    }
    const remote::Counters k = c->counters();
    EXPECT_EQ(k.uploads, 3u);
    EXPECT_EQ(k.hits, 3u);
    EXPECT_EQ(k.errors, 0u);
}

TEST_F(RemoteS3, ASessionTokenTravelsWithTheSignedRequests) {
    start();
    auto c = client(settings(S3Server::kSecret, "FwoGZXIvYXdzEXAMPLETOKEN"));
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    auto got = c->fetch(made_up_fields(1));
    ASSERT_TRUE(got) << got.error().message;
}

TEST_F(RemoteS3, VirtualHostedRequestsNameTheBucketInTheHost) {
    start({.lenient = true});  // see s3_server.hpp: s3rver signs these its own way
    remote::Settings s = settings();
    s.s3.endpoint = server_->vhost_endpoint();
    s.s3.url_style = remote::S3UrlStyle::virtual_hosted;
    auto c = client(s);
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->upload(made_up_fields(2), made_up_bytes(2), made_up_provenance()));
    EXPECT_TRUE(std::filesystem::exists(server_->object_file(object_key(2))));
    auto got = c->fetch(made_up_fields(2));
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->bytes, made_up_bytes(2));
    // The paths sent held no bucket: it was in the host name.
    std::ifstream log(dir() / "s3rver/requests.log");
    for (std::string line; std::getline(log, line);) {
        EXPECT_EQ(line.find("/" + server_->bucket()), std::string::npos) << line;
    }
}

TEST_F(RemoteS3, AWrongSecretIsRefusedByTheServerAndCountedAsAnError) {
    start();
    ASSERT_TRUE(
        client(settings())->upload(made_up_fields(3), made_up_bytes(3), made_up_provenance()));
    const std::string wrong = "not-the-secret-of-S3RVER";
    auto c = client(settings(wrong));
    ASSERT_TRUE(c);
    auto up = c->upload(made_up_fields(4), made_up_bytes(4), made_up_provenance());
    ASSERT_FALSE(up);
    EXPECT_EQ(up.error().code, RemoteErrc::http_status);
    EXPECT_NE(up.error().message.find("HTTP 403 (SignatureDoesNotMatch)"), std::string::npos)
        << up.error().message;
    EXPECT_FALSE(std::filesystem::exists(server_->object_file(object_key(4))));
    for (int attempt = 0; attempt < 2; ++attempt) {  // a refusal leaves the breaker closed
        auto got = c->fetch(made_up_fields(3));
        ASSERT_FALSE(got);
        EXPECT_EQ(got.error().code, RemoteErrc::http_status);
        EXPECT_EQ(got.error().message.find(wrong), std::string::npos);
    }
    EXPECT_EQ(server_->count("GET", 403), 2u);
    const remote::Counters k = c->counters();
    EXPECT_EQ(k.errors, 2u);
    EXPECT_EQ(k.upload_failures, 1u);
    EXPECT_EQ(k.hits, 0u);
}

TEST_F(RemoteS3, EachUrlsAttributesPlaceItsObjectsAndSignThem) {
    start();
    remote::Settings s = settings();  // writes the right credentials file
    std::ofstream(dir() / "wrong") << "[default]\naws_access_key_id = " << S3Server::kAccessKeyId
                                   << "\naws_secret_access_key = not-the-secret\n";
    const std::string good = "s3://" + server_->bucket() + "/fleet";
    const std::string other = "s3://" + server_->bucket() + "/other";
    const std::string at = "?url_style=path&endpoint=" + server_->endpoint() + "&credentials_file=";
    s.base_urls = {good + at + (dir() / "credentials").string(),
                   other + at + (dir() / "wrong").string()};
    s.s3 = {};  // no defaults: AWS and the environment, were the attributes not read
    auto c = client(s);
    ASSERT_TRUE(c);
    int placed = 0;
    for (int n = 0; n < 12; ++n) {
        auto up = c->upload(made_up_fields(n), made_up_bytes(n), made_up_provenance());
        const bool on_good = c->shard_for(store::make_key(made_up_fields(n))) == good;
        placed += on_good ? 1 : 0;
        EXPECT_EQ(static_cast<bool>(up), on_good) << n;
        EXPECT_EQ(std::filesystem::exists(server_->object_file(object_key(n))), on_good) << n;
        if (!on_good) {  // signed with the other URL's wrong secret
            ASSERT_FALSE(up);
            EXPECT_NE(up.error().message.find("HTTP 403"), std::string::npos);
        }
    }
    EXPECT_GT(placed, 0);
    EXPECT_LT(placed, 12);
    EXPECT_EQ(server_->count("PUT", 200), static_cast<std::size_t>(placed));
}

TEST_F(RemoteS3, GarbageUnderAKeyIsACorruptMiss) {
    start();
    const remote::Settings s = settings();
    auto backend = remote::make_backend(s, *remote::Credential::open(s));
    ASSERT_TRUE(backend) << backend.error().message;
    auto c = client(s);
    ASSERT_TRUE(c);
    const std::string url = c->object_url(store::make_key(made_up_fields(5)));
    ASSERT_TRUE((*backend)->put(url, store::Bytes{'n', 'o', 't', ' ', 'o', 'u', 'r', 's'}));
    auto got = c->fetch(made_up_fields(5));
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, RemoteErrc::corrupt);
    EXPECT_EQ(c->counters().corrupt, 1u);
}

TEST_F(RemoteS3, AServerGoneCostsOneRequestThenTheBreakerSkipsIt) {
    start();
    auto c = client(settings());
    ASSERT_TRUE(c);
    server_->stop();
    auto first = c->fetch(made_up_fields(6));
    ASSERT_FALSE(first);
    EXPECT_EQ(first.error().code, RemoteErrc::unreachable);
    auto second = c->fetch(made_up_fields(6));
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().code, RemoteErrc::breaker_open);
}

TEST_F(RemoteS3, ShardsOfDifferentKindsKeepRendezvousPlacement) {
    start();
    auto nginx = start_nginx(dir() / "nginx");
    ASSERT_TRUE(nginx);
    remote::Settings s = settings();
    s.base_urls.push_back(nginx->url());
    auto c = client(s);
    ASSERT_TRUE(c);
    int on_s3 = 0;
    for (int n = 0; n < 12; ++n) {
        ASSERT_TRUE(c->upload(made_up_fields(n), made_up_bytes(n, 1024), made_up_provenance()));
        const store::Key key = store::make_key(made_up_fields(n));
        const bool s3 = c->shard_for(key) == s.base_urls[0];
        on_s3 += s3 ? 1 : 0;
        // Each object is on its owner only.
        EXPECT_EQ(std::filesystem::exists(server_->object_file(object_key(n))), s3) << n;
        EXPECT_EQ(std::filesystem::exists(nginx->object_file(key.hex())), !s3) << n;
    }
    EXPECT_GT(on_s3, 0);
    EXPECT_LT(on_s3, 12);
    auto reader = client(s);  // another process's view: the same owner for each key
    for (int n = 0; n < 12; ++n) {
        auto got = reader->fetch(made_up_fields(n));
        ASSERT_TRUE(got) << n << ": " << got.error().message;
        EXPECT_EQ(got->bytes, made_up_bytes(n, 1024));
    }
}

}  // namespace
}  // namespace kcache::test
