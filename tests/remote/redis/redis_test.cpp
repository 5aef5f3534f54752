// The Redis backend and the client on it against a real redis-server 7
// started by each test on a free loopback port: requests and their typed
// answers, database and key prefix, ACL users, a wrong password, TTL, values
// that are not objects, a server killed mid-run, eight processes sharing it.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "backend.hpp"
#include "child_process.hpp"
#include "credential.hpp"
#include "kcache/remote/remote.hpp"
#include "kcache/store/key.hpp"
#include "redis_fixture.hpp"
#include "redis_server.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

using remote::RemoteErrc;

// An ACL user that may touch kcache's keys with the commands the backend sends.
constexpr const char* kWriterAcl =
    "user kc on >kc-secret ~kcache/* resetchannels -@all +exists +strlen +getrange +set +del "
    "+select";
// One that may only read them.
constexpr const char* kReaderAcl =
    "user fleet on >fleet-secret ~kcache/* -@all +exists +strlen +getrange";

// RedisTest: redis_fixture.hpp.

TEST_F(RedisTest, AnswersEachRequestWithAReplyOrATypedFailure) {
    const remote::Settings s = settings(server_->url());
    auto backend = remote::make_backend(s, *remote::Credential::open(s));
    ASSERT_TRUE(backend) << backend.error().message;
    // Database 2, key prefix "team": the key is "team/kcache/v1/ab/object".
    const std::string url = server_->url() + "/2/team/kcache/v1/ab/object";
    const store::Bytes object{1, 2, 0, 4};

    auto absent = (*backend)->get(url);
    ASSERT_FALSE(absent);
    EXPECT_EQ(absent.error().error.code, RemoteErrc::not_found);
    EXPECT_EQ(absent.error().status, 404);
    auto put = (*backend)->put(url, object);
    ASSERT_TRUE(put) << put.error().error.message;
    EXPECT_EQ(cli({"-n", "2", "EXISTS", "team/kcache/v1/ab/object"}), "1");
    EXPECT_EQ(cli({"-n", "0", "EXISTS", "team/kcache/v1/ab/object"}), "0");
    EXPECT_EQ(cli({"-n", "2", "TTL", "team/kcache/v1/ab/object"}), "-1");  // no TTL set
    auto got = (*backend)->get(url);
    ASSERT_TRUE(got) << got.error().error.message;
    EXPECT_EQ(got->status, 200);
    EXPECT_EQ(got->body, object);
    EXPECT_TRUE((*backend)->head(url));
    EXPECT_TRUE((*backend)->remove(url));
    auto gone = (*backend)->head(url);
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().error.code, RemoteErrc::not_found);

    // A value larger than the first chunk (1 MiB) comes back whole.
    store::Bytes big(3 << 20);
    for (std::size_t i = 0; i < big.size(); ++i) {
        big[i] = static_cast<std::uint8_t>(i * 7 + i / 4096);
    }
    ASSERT_TRUE((*backend)->put(url, big));
    auto back = (*backend)->get(url);
    ASSERT_TRUE(back) << back.error().error.message;
    EXPECT_EQ(back->body, big);
}

TEST_F(RedisTest, TheClientUploadsAndFetchesVerifiedObjectsOnOneConnection) {
    const long long before = connections();
    auto c = client(settings(server_->url()));
    ASSERT_TRUE(c);
    for (int n = 0; n < 5; ++n) {
        ASSERT_TRUE(c->upload(made_up_fields(n), made_up_bytes(n), made_up_provenance()));
    }
    for (int n = 0; n < 5; ++n) {
        auto got = c->fetch(made_up_fields(n));
        ASSERT_TRUE(got) << got.error().message;
        EXPECT_EQ(got->bytes, made_up_bytes(n));
    }
    EXPECT_EQ(cli({"EXISTS", key_of(0)}), "1");
    auto missing = c->fetch(made_up_fields(99));
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, RemoteErrc::not_found);
    // Eleven requests, one connection: the process reuses it.
    EXPECT_EQ(connections() - before, 1 + 2);  // the client's, redis-cli's EXISTS and INFO
    const auto n = c->counters();
    EXPECT_EQ(n.uploads, 5u);
    EXPECT_EQ(n.hits, 5u);
    EXPECT_EQ(n.misses, 1u);
    EXPECT_EQ(n.errors, 0u);
}

TEST_F(RedisTest, AclUsersLogInAndAReaderMayNotWrite) {
    start({{kWriterAcl, kReaderAcl, "user default off"}, false, "kc", "kc-secret"});
    const std::string port = std::to_string(server_->port());
    auto s = settings("redis://kc:kc-secret@127.0.0.1:" + port);
    s.plain_http_token = remote::PlainHttpToken::allow;
    auto writer = client(s);
    ASSERT_TRUE(writer);
    ASSERT_TRUE(writer->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    EXPECT_TRUE(writer->fetch(made_up_fields(1)));
    ASSERT_EQ(cli({"SET", key_of(3), "garbage"}), "OK");
    auto corrupt = writer->fetch(made_up_fields(3));
    ASSERT_FALSE(corrupt);
    EXPECT_EQ(corrupt.error().code, RemoteErrc::corrupt);
    EXPECT_EQ(corrupt.error().message.find("kc-secret"), std::string::npos)
        << corrupt.error().message;

    // The reader's password from the token file; the user from the URL.
    std::filesystem::create_directories(dir() / "secrets");
    std::ofstream(dir() / "secrets" / "redis") << "fleet-secret\n";
    auto rs = settings("redis://fleet@127.0.0.1:" + port);
    rs.token_file = dir() / "secrets" / "redis";
    rs.plain_http_token = remote::PlainHttpToken::allow;
    auto reader = client(rs);
    ASSERT_TRUE(reader);
    auto got = reader->fetch(made_up_fields(1));
    ASSERT_TRUE(got) << got.error().message;
    auto refused = reader->upload(made_up_fields(2), made_up_bytes(2), made_up_provenance());
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("NOPERM"), std::string::npos) << refused.error().message;
    // A refused write leaves the breaker closed: reads go on.
    EXPECT_TRUE(down_marks(dir() / "state").empty());
    EXPECT_TRUE(reader->fetch(made_up_fields(1)));
}

TEST_F(RedisTest, AWrongPasswordIsAClearErrorAndAMissThatNamesNoSecret) {
    start({{kWriterAcl, "user default off"}, false, "kc", "kc-secret"});
    auto s = settings("redis://kc:not-the-password@127.0.0.1:" + std::to_string(server_->port()));
    s.plain_http_token = remote::PlainHttpToken::allow;
    auto c = client(s);
    ASSERT_TRUE(c);
    for (int i = 0; i < 2; ++i) {  // not a down server: every request is tried
        auto got = c->fetch(made_up_fields(1));
        ASSERT_FALSE(got);
        EXPECT_EQ(got.error().code, RemoteErrc::http_status);
        EXPECT_NE(got.error().message.find("AUTH as user kc refused"), std::string::npos)
            << got.error().message;
        EXPECT_NE(got.error().message.find("WRONGPASS"), std::string::npos);
        EXPECT_EQ(got.error().message.find("not-the-password"), std::string::npos);
    }
    EXPECT_TRUE(down_marks(dir() / "state").empty());
    EXPECT_EQ(c->counters().errors, 2u);
}

TEST_F(RedisTest, ObjectsExpireAfterTheTtl) {
    auto s = settings(server_->url());
    s.ttl = Millis(400);
    auto c = client(s);
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    const int pttl = std::stoi(cli({"PTTL", key_of(1)}));
    EXPECT_GT(pttl, 0);
    EXPECT_LE(pttl, 400);
    EXPECT_TRUE(c->fetch(made_up_fields(1)));
    std::this_thread::sleep_for(Millis(600));
    auto gone = c->fetch(made_up_fields(1));
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code, RemoteErrc::not_found);
}

TEST_F(RedisTest, ValuesThatAreNotTheObjectAreCountedCorruptMisses) {
    auto s = settings(server_->url());
    s.max_object_bytes = 1 << 20;
    auto c = client(s);
    ASSERT_TRUE(c);
    auto backend = remote::make_backend(s, *remote::Credential::open(s));
    ASSERT_TRUE(backend);
    ASSERT_TRUE(c->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    auto whole = (*backend)->get(server_->url() + "/" + key_of(1));
    ASSERT_TRUE(whole);
    // Garbage, the object truncated, a hash instead of a string.
    ASSERT_TRUE(cli({"SET", key_of(2), "garbage"}) == "OK");
    store::Bytes truncated(whole->body.begin(), whole->body.end() - 100);
    ASSERT_TRUE(c->upload(made_up_fields(3), made_up_bytes(3), made_up_provenance()));
    ASSERT_TRUE((*backend)->put(server_->url() + "/" + key_of(3), truncated));
    ASSERT_EQ(cli({"HSET", key_of(4), "field", "value"}), "1");
    for (int n : {2, 3, 4}) {
        auto got = c->fetch(made_up_fields(n));
        ASSERT_FALSE(got) << n;
        EXPECT_EQ(got.error().code, RemoteErrc::corrupt) << n << ": " << got.error().message;
    }
    // Over the cap: refused after the first chunk, never read whole.
    store::Bytes huge(8 << 20, 0x5a);
    ASSERT_TRUE((*backend)->put(server_->url() + "/" + key_of(5), huge));
    auto sent_before = cli({"INFO", "stats"});
    auto too_large = c->fetch(made_up_fields(5));
    ASSERT_FALSE(too_large);
    EXPECT_EQ(too_large.error().code, RemoteErrc::too_large) << too_large.error().message;
    auto output = [](const std::string& info) {
        const auto at = info.find("total_net_output_bytes:");
        return std::stoull(info.substr(at + 23));
    };
    EXPECT_LT(output(cli({"INFO", "stats"})) - output(sent_before), 2u << 20);
    EXPECT_EQ(c->counters().corrupt, 4u);
    EXPECT_TRUE(down_marks(dir() / "state").empty());
    EXPECT_TRUE(c->fetch(made_up_fields(1)));
}

TEST_F(RedisTest, AServerKilledMidRunIsSkippedForTheWindowThenFollowedBack) {
    auto s = settings(server_->url());
    s.breaker_window = Millis(300);
    auto c = client(s);
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    ASSERT_TRUE(c->fetch(made_up_fields(1)));
    server_->kill();
    auto got = c->fetch(made_up_fields(1));
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, RemoteErrc::unreachable) << got.error().message;
    EXPECT_EQ(c->fetch(made_up_fields(1)).error().code, RemoteErrc::breaker_open);
    ASSERT_TRUE(server_->restart());  // an empty server (nothing saved)
    std::this_thread::sleep_for(Millis(400));
    auto after = c->fetch(made_up_fields(1));  // a new connection, a plain miss
    ASSERT_FALSE(after);
    EXPECT_EQ(after.error().code, RemoteErrc::not_found) << after.error().message;
    ASSERT_TRUE(c->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    EXPECT_TRUE(c->fetch(made_up_fields(1)));
    // A restart between two requests closes the pooled connection: the next
    // request reconnects once instead of failing.
    server_->stop();
    ASSERT_TRUE(server_->restart());
    auto fresh = c->fetch(made_up_fields(1));
    ASSERT_FALSE(fresh);
    EXPECT_EQ(fresh.error().code, RemoteErrc::not_found) << fresh.error().message;
    EXPECT_EQ(c->counters().errors, 1u);
}

TEST_F(RedisTest, ShardsAcrossNginxAndRedisKeepRendezvousPlacement) {
    auto nginx = start_nginx(dir() / "nginx");
    ASSERT_TRUE(nginx);
    const std::string redis = server_->url();
    const std::string redis_db1 = server_->url() + "/1/other";
    auto s = settings(nginx->url());
    s.base_urls = {nginx->url(), redis};
    auto two = client(s);
    s.base_urls = {nginx->url(), redis, redis_db1};
    auto three = client(s);
    ASSERT_TRUE(two && three);
    int on_nginx = 0, on_redis = 0, moved = 0;
    for (int n = 0; n < 30; ++n) {
        const auto key = store::make_key(made_up_fields(n));
        ASSERT_TRUE(three->upload(made_up_fields(n), made_up_bytes(n, 2048), made_up_provenance()));
        const std::string& owner = three->shard_for(key);
        const bool in_nginx = std::filesystem::exists(nginx->object_file(key.hex()));
        const bool in_redis = cli({"EXISTS", key_of(n)}) == "1";
        const bool in_db1 = cli({"-n", "1", "EXISTS", "other/" + key_of(n)}) == "1";
        // Each object lives where rendezvous hashing puts it, and only there.
        EXPECT_EQ(in_nginx, owner == nginx->url()) << n;
        EXPECT_EQ(in_redis, owner == redis) << n;
        EXPECT_EQ(in_db1, owner == redis_db1) << n;
        EXPECT_EQ(in_nginx + in_redis + in_db1, 1) << n;
        // Removing a server moves only the keys it owned.
        if (owner != redis_db1) {
            EXPECT_EQ(two->shard_for(key), owner) << n;
        } else {
            ++moved;
        }
        on_nginx += in_nginx;
        on_redis += in_redis;
        auto got = three->fetch(made_up_fields(n));
        ASSERT_TRUE(got) << n << ": " << got.error().message;
    }
    EXPECT_GT(on_nginx, 3);  // every server takes a share of 30 keys
    EXPECT_GT(on_redis, 3);
    EXPECT_GT(moved, 3);
}

TEST_F(RedisTest, EightProcessesUploadAndFetchTheSameKeysAtOnce) {
    if (child_role() == "writer") {
        auto c = client(test_settings(child_env("URL"), child_env("STATE")));
        ASSERT_TRUE(c);
        ASSERT_TRUE(wait_for_start_gate());
        for (int n = 0; n < 10; ++n) {
            auto up = c->upload(made_up_fields(n), made_up_bytes(n), made_up_provenance());
            ASSERT_TRUE(up) << up.error().message;
            auto got = c->fetch(made_up_fields((n + 5 * child_index()) % 10));
            ASSERT_TRUE(got || got.error().code == RemoteErrc::not_found) << got.error().message;
        }
        return;
    }
    auto group = ChildGroup::spawn(
        8, "writer", {{"URL", server_->url()}, {"STATE", (dir() / "state").string()}});
    group.release();
    for (const auto& r : group.wait_all(std::chrono::seconds(120))) {
        EXPECT_TRUE(r.ok()) << r.describe();
    }
    auto c = client(settings(server_->url()));
    for (int n = 0; n < 10; ++n) {
        auto got = c->fetch(made_up_fields(n));
        ASSERT_TRUE(got) << n << ": " << got.error().message;
        EXPECT_EQ(got->bytes, made_up_bytes(n));
    }
    const auto total = remote::read_stats_file(dir() / "state");
    EXPECT_EQ(total.uploads, 80u);
    EXPECT_EQ(total.corrupt, 0u);
    EXPECT_EQ(total.errors, 0u);
}

}  // namespace
}  // namespace kcache::test
