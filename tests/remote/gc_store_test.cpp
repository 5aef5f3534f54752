// remote::Client::gc on S3 (s3rver) and Redis (redis-server 7), and the
// listing parsers on bad answers.
//
// What is exercised for real: s3rver's ListObjectsV2 reports LastModified
// from the object file's mtime, so objects are made old by setting it, as
// for WebDAV. One page only: s3rver cannot answer a second one here (its
// continuation token is DES-encrypted, which Node 20's OpenSSL 3 refuses:
// HTTP 500), so the paging is run against canned pages below. Redis keeps no write time: its age is
// OBJECT IDLETIME (since the last read or write), so the test waits 3 s, reads one object, and gc
// --older-than 2s removes only the one nobody read. Bad answers (garbage, a page cut off, a
// truncated listing without a token) go through a backend whose get() returns them (s3_list's
// seam), since no real server sends them.

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "listing.hpp"
#include "namespace_support.hpp"
#include "redis_server.hpp"
#include "s3_server.hpp"

namespace kcache::test {
namespace {

constexpr auto kOld = std::chrono::hours(40 * 24);

std::unique_ptr<remote::Client> open_client(remote::Settings s) {
    auto c = remote::Client::open(std::move(s));
    EXPECT_TRUE(c) << c.error().message;
    return c ? std::move(*c) : nullptr;
}

void upload(remote::Client& c, int n) {
    auto up = c.upload(made_up_fields(n), made_up_bytes(n, 512), made_up_provenance());
    ASSERT_TRUE(up) << up.error().message;
}

remote::GcRequest request(std::chrono::seconds older, remote::GcMode mode) {
    return remote::GcRequest{"team-a", older, mode, {}};
}

class RemoteGcS3 : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        ASSERT_TRUE(start_into(server_, S3Server::start(dir() / "s3")));
    }
    remote::Settings settings(const std::string& state, const std::string& name) {
        auto s = namespace_settings("s3://" + server_->bucket() + "/fleet", dir() / state,
                                    test_signing_key(), {trusting(name, {test_signing_key()})});
        s.s3.endpoint = server_->endpoint();
        s.s3.credentials_file = dir() / "credentials";
        std::ofstream(s.s3.credentials_file)
            << "[default]\naws_access_key_id = " << S3Server::kAccessKeyId
            << "\naws_secret_access_key = " << S3Server::kSecret << "\n";
        return s;
    }
    std::filesystem::path file(const std::string& name, int n) const {
        return server_->object_file("fleet/" + object_in(name, n));
    }
    std::optional<S3Server> server_;
};

TEST_F(RemoteGcS3, RemovesOnlyTheOldObjectsOfTheNamespace) {
    auto a = open_client(settings("a", "team-a"));
    auto b = open_client(settings("b", "team-b"));
    ASSERT_TRUE(a && b);
    constexpr int kObjects = 40;
    std::vector<store::KeyFields> fields;
    std::vector<store::Bytes> bytes(kObjects, made_up_bytes(0, 256));
    std::vector<remote::Client::UploadItem> items;
    for (int n = 0; n < kObjects; ++n) {
        fields.push_back(made_up_fields(n));
    }
    const store::Provenance p = made_up_provenance();
    for (int n = 0; n < kObjects; ++n) {
        items.push_back({&fields[n], bytes[n], &p});
    }
    for (const auto& up : a->upload_many(items)) {
        ASSERT_TRUE(up) << up.error().message;
    }
    upload(*b, 1);
    for (int n : {5, 20, 39}) {
        make_old(file("team-a", n), kOld);
    }
    make_old(file("team-b", 1), kOld);

    auto dry = a->gc(request(std::chrono::hours(24 * 30), remote::GcMode::dry_run));
    ASSERT_TRUE(dry) << dry.error().message;
    EXPECT_EQ(dry->listed, static_cast<std::uint64_t>(kObjects));
    EXPECT_EQ(dry->old, 3u);
    EXPECT_EQ(dry->removed, 0u);
    EXPECT_TRUE(std::filesystem::exists(file("team-a", 20)));

    auto real = a->gc(request(std::chrono::hours(24 * 30), remote::GcMode::remove));
    ASSERT_TRUE(real) << real.error().message;
    EXPECT_EQ(real->removed, 3u);
    EXPECT_EQ(real->failed, 0u);
    for (int n : {5, 20, 39}) {
        EXPECT_FALSE(std::filesystem::exists(file("team-a", n))) << n;
    }
    EXPECT_TRUE(std::filesystem::exists(file("team-a", 6)));
    EXPECT_TRUE(std::filesystem::exists(file("team-b", 1)));
    auto after = a->gc(request(std::chrono::hours(24 * 30), remote::GcMode::dry_run));
    ASSERT_TRUE(after);
    EXPECT_EQ(after->listed, static_cast<std::uint64_t>(kObjects - 3));
}

class RemoteGcRedis : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        ASSERT_TRUE(start_into(server_, RedisServer::start(dir() / "redis")));
    }
    remote::Settings settings(const std::string& state, const std::string& name) {
        return namespace_settings(server_->url() + "/fleet", dir() / state, test_signing_key(),
                                  {trusting(name, {test_signing_key()})});
    }
    bool exists(const std::string& name, int n) const {
        auto r = server_->cli({"EXISTS", "fleet/" + object_in(name, n)});
        EXPECT_TRUE(r) << r.error();
        return r && r->find('1') != std::string::npos;
    }
    std::optional<RedisServer> server_;
};

TEST_F(RemoteGcRedis, RemovesOnlyWhatNobodyUsedForThatLong) {
    auto a = open_client(settings("a", "team-a"));
    auto b = open_client(settings("b", "team-b"));
    auto plain = open_client(test_settings(server_->url() + "/fleet", dir() / "plain"));
    ASSERT_TRUE(a && b && plain);
    upload(*a, 1);
    upload(*a, 2);
    upload(*b, 3);
    upload(*plain, 4);
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));
    ASSERT_TRUE(a->fetch(made_up_fields(2)));  // used: idle again from now

    auto dry = a->gc(request(std::chrono::seconds(2), remote::GcMode::dry_run));
    ASSERT_TRUE(dry) << dry.error().message;
    EXPECT_EQ(dry->listed, 2u);
    EXPECT_EQ(dry->old, 1u);
    EXPECT_TRUE(exists("team-a", 1));
    auto real = a->gc(request(std::chrono::seconds(2), remote::GcMode::remove));
    ASSERT_TRUE(real) << real.error().message;
    EXPECT_EQ(real->removed, 1u);
    EXPECT_FALSE(exists("team-a", 1));
    EXPECT_TRUE(exists("team-a", 2));
    EXPECT_TRUE(exists("team-b", 3));  // idle as long, another namespace
    EXPECT_TRUE(exists("", 4));        // the default layout
}

// A backend whose get() answers the bodies it was given, in turn.
class Canned final : public remote::Backend {
  public:
    explicit Canned(std::vector<std::string> bodies) : bodies_(std::move(bodies)) {}
    Result<remote::Reply, remote::Failure> get(const std::string& url) override {
        urls.push_back(url);
        const std::string b = next_ < bodies_.size() ? bodies_[next_++] : "";
        return remote::Reply{200, store::Bytes(b.begin(), b.end())};
    }
    Result<remote::Reply, remote::Failure> head(const std::string& url) override {
        return get(url);
    }
    Result<remote::Reply, remote::Failure> put(const std::string& url,
                                               std::span<const std::uint8_t>) override {
        return get(url);
    }
    Result<remote::Reply, remote::Failure> remove(const std::string& url) override {
        return get(url);
    }
    std::vector<std::string> urls;

  private:
    std::vector<std::string> bodies_;
    std::size_t next_ = 0;
};

std::string contents(const std::string& key, const std::string& when) {
    return "<Contents><Key>" + key + "</Key><LastModified>" + when + "</LastModified></Contents>";
}

TEST(RemoteGcListing, BadS3AnswersAreClearErrorsNeverACrash) {
    const std::string dir = "s3://b/p/kcache/ns/team-a/v1/";
    const std::string hex(64, 'a');
    const std::string good =
        contents("p/kcache/ns/team-a/v1/aa/" + hex, "2020-01-02T03:04:05.000Z");
    for (const std::string& body :
         {std::string("garbage"), std::string("<ListBucketResult><IsTruncated>false"),
          "<ListBucketResult>" + good.substr(0, good.size() / 2),
          std::string("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>"),
          "<ListBucketResult><IsTruncated>false</IsTruncated>" +
              contents("p/kcache/ns/team-a/v1/aa/" + hex, "yesterday") + "</ListBucketResult>"}) {
        Canned backend({body});
        auto r = remote::s3_list(backend, dir);
        ASSERT_FALSE(r) << body;
        EXPECT_NE(r.error().error.message.find("ListObjectsV2"), std::string::npos)
            << r.error().error.message;
    }
    // Two pages; names outside the namespace's layout are left out.
    Canned two(
        {"<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>t/1="
         "</NextContinuationToken>" +
             good + contents("p/kcache/ns/team-a/v1/zz/x", "2020-01-02T03:04:05Z") +
             "</ListBucketResult>",
         "<ListBucketResult><IsTruncated>false</IsTruncated>" +
             contents("p/kcache/ns/team-a/v1/bb/" + std::string(64, 'b'), "2020-01-02T03:04:05Z") +
             "</ListBucketResult>"});
    auto r = remote::s3_list(two, dir);
    ASSERT_TRUE(r) << r.error().error.message;
    ASSERT_EQ(r->size(), 2u);
    EXPECT_EQ((*r)[0].name, "aa/" + hex);
    EXPECT_GT((*r)[0].age.count(), 86'400);
    ASSERT_EQ(two.urls.size(), 2u);
    EXPECT_EQ(
        two.urls[1],
        "s3://b/?continuation-token=t%2F1%3D&list-type=2&prefix=p%2Fkcache%2Fns%2Fteam-a%2Fv1%2F");
}

TEST(RemoteGcListing, XmlDatesAndNames) {
    auto els = remote::xml_elements("<D:r><D:href>a&amp;b</D:href><D:collection/></D:r>", "href");
    ASSERT_TRUE(els);
    ASSERT_EQ(els->size(), 1u);
    EXPECT_EQ(remote::xml_text(els->front()), "a&b");
    EXPECT_EQ(remote::xml_elements("<D:r><D:collection/></D:r>", "collection")->size(), 1u);
    EXPECT_FALSE(remote::xml_elements("<D:r><D:href>cut", "href"));
    EXPECT_FALSE(remote::xml_elements("<D:r><D:hr", "href"));
    EXPECT_EQ(remote::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
    EXPECT_FALSE(remote::parse_http_date("Sun, 06 Nov 1994 08:49:37"));
    EXPECT_FALSE(remote::parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT"));
    EXPECT_EQ(remote::parse_iso_time("1994-11-06T08:49:37.000Z"), 784111777);
    EXPECT_FALSE(remote::parse_iso_time("1994-13-06T08:49:37Z"));
    const std::string hex = "ab" + std::string(62, '0');
    EXPECT_TRUE(remote::object_name("ab/" + hex));
    EXPECT_FALSE(remote::object_name("ac/" + hex));
    EXPECT_FALSE(remote::object_name("AB/" + hex));
    EXPECT_FALSE(remote::object_name("../" + hex));
}

}  // namespace
}  // namespace kcache::test
