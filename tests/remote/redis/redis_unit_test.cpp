// The Redis backends without a server: URLs, key slots (CRC16 vectors of
// the Redis Cluster specification), CLUSTER SLOTS replies fed through
// hiredis's own protocol reader, redirects, and the settings refused when
// a client opens.

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include "backend.hpp"
#include "kcache/remote/remote.hpp"
#include "kcache/remote/schemes.hpp"
#include "redis/redis_cluster.hpp"
#include "redis/redis_conn.hpp"
#include "redis/redis_url.hpp"

namespace kcache::test {
namespace {

using remote::RedisNode;

// The reply hiredis reads from RESP text `resp`.
remote::RedisReplyPtr read_reply(const std::string& resp) {
    redisReader* reader = redisReaderCreate();
    EXPECT_EQ(redisReaderFeed(reader, resp.data(), resp.size()), REDIS_OK);
    void* reply = nullptr;
    EXPECT_EQ(redisReaderGetReply(reader, &reply), REDIS_OK);
    redisReaderFree(reader);
    return remote::RedisReplyPtr(static_cast<redisReply*>(reply));
}

TEST(RedisSlots, Crc16MatchesTheClusterSpecification) {
    // The spec's check value: CRC16/XMODEM of "123456789" is 0x31C3.
    EXPECT_EQ(remote::crc16("123456789"), 0x31C3);
    EXPECT_EQ(remote::crc16(""), 0);
    // CLUSTER KEYSLOT answers of Redis 7 (the cluster test compares more keys live).
    EXPECT_EQ(remote::key_slot("foo"), 12182);
    EXPECT_EQ(remote::key_slot("bar"), 5061);
    EXPECT_EQ(remote::key_slot("hello"), 866);
}

TEST(RedisSlots, HashTagsFollowTheSpecification) {
    // Examples of the specification's "Hash tags" section.
    EXPECT_EQ(remote::key_slot("{user1000}.following"), remote::key_slot("{user1000}.followers"));
    EXPECT_EQ(remote::key_slot("{user1000}.following"), remote::key_slot("user1000"));
    EXPECT_EQ(remote::key_slot("foo{}{bar}"), remote::crc16("foo{}{bar}") % 16384);
    EXPECT_EQ(remote::key_slot("foo{{bar}}zap"), remote::key_slot("{bar"));
    EXPECT_EQ(remote::key_slot("foo{bar}{zap}"), remote::key_slot("bar"));
    EXPECT_EQ(remote::key_slot("no tag}{"), remote::crc16("no tag}{") % 16384);
}

TEST(RedisSlots, ClusterSlotsRepliesAreParsed) {
    // Three ranges; the second master's host is "" (an unknown endpoint:
    // the node asked); replicas and node ids are read past.
    const std::string resp =
        "*3\r\n"
        "*4\r\n:0\r\n:5460\r\n*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$2\r\nid\r\n"
        "*3\r\n$9\r\n127.0.0.1\r\n:7003\r\n$2\r\nid\r\n"
        "*3\r\n:5461\r\n:10922\r\n*2\r\n$0\r\n\r\n:7001\r\n"
        "*3\r\n:10923\r\n:16383\r\n*2\r\n$8\r\n10.0.0.2\r\n:7002\r\n";
    auto reply = read_reply(resp);
    ASSERT_TRUE(reply);
    auto ranges = remote::parse_cluster_slots(reply.get(), RedisNode{"127.0.0.9", 7009});
    ASSERT_TRUE(ranges) << ranges.error();
    ASSERT_EQ(ranges->size(), 3u);
    EXPECT_EQ((*ranges)[0].first, 0);
    EXPECT_EQ((*ranges)[0].last, 5460);
    EXPECT_EQ((*ranges)[0].master, (RedisNode{"127.0.0.1", 7000}));
    EXPECT_EQ((*ranges)[1].master, (RedisNode{"127.0.0.9", 7001}));
    EXPECT_EQ((*ranges)[2].master, (RedisNode{"10.0.0.2", 7002}));

    remote::SlotMap map({RedisNode{"seed", 1}});
    EXPECT_FALSE(map.node_for(0));  // nothing loaded yet
    map.load(*ranges);
    EXPECT_EQ(map.node_for(5460), (RedisNode{"127.0.0.1", 7000}));
    EXPECT_EQ(map.node_for(5461), (RedisNode{"127.0.0.9", 7001}));
    EXPECT_EQ(map.node_for(16383), (RedisNode{"10.0.0.2", 7002}));
    map.failed(RedisNode{"127.0.0.1", 7000});
    EXPECT_FALSE(map.node_for(0));  // reloaded before the next request…
    const auto ask = map.candidates();
    ASSERT_EQ(ask.size(), 4u);  // …asking the others first, the failed node last
    EXPECT_EQ(ask.back(), (RedisNode{"127.0.0.1", 7000}));
    EXPECT_EQ(ask[2], (RedisNode{"seed", 1}));
}

TEST(RedisSlots, MalformedClusterSlotsRepliesAreRefused) {
    const RedisNode asked{"h", 1};
    for (const std::string& resp : {
             std::string("+OK\r\n"),
             std::string("*1\r\n*2\r\n:0\r\n:5\r\n"),                             // no master
             std::string("*1\r\n*3\r\n:5\r\n:4\r\n*2\r\n$1\r\nh\r\n:1\r\n"),      // last < first
             std::string("*1\r\n*3\r\n:0\r\n:16384\r\n*2\r\n$1\r\nh\r\n:1\r\n"),  // past the end
             std::string("*1\r\n*3\r\n:0\r\n:5\r\n*2\r\n$1\r\nh\r\n:70000\r\n"),  // port
             std::string("*1\r\n*3\r\n:0\r\n:5\r\n*2\r\n:1\r\n:1\r\n"),           // host not text
         }) {
        auto reply = read_reply(resp);
        ASSERT_TRUE(reply);
        EXPECT_FALSE(remote::parse_cluster_slots(reply.get(), asked)) << resp;
    }
}

TEST(RedisSlots, RedirectsAreParsed) {
    const RedisNode asked{"10.1.1.1", 7000};
    auto moved = remote::parse_redirect("MOVED 3999 127.0.0.1:6381", asked);
    ASSERT_TRUE(moved);
    EXPECT_EQ(moved->kind, remote::Redirect::Kind::moved);
    EXPECT_EQ(moved->slot, 3999);
    EXPECT_EQ(moved->node, (RedisNode{"127.0.0.1", 6381}));
    auto ask = remote::parse_redirect("ASK 12 :7002", asked);
    ASSERT_TRUE(ask);
    EXPECT_EQ(ask->kind, remote::Redirect::Kind::ask);
    EXPECT_EQ(ask->node, (RedisNode{"10.1.1.1", 7002}));
    EXPECT_EQ(remote::parse_redirect("MOVED 1 [::1]:7000", asked)->node, (RedisNode{"::1", 7000}));
    for (const char* bad : {"ERR MOVED 1 h:1", "MOVED x h:1", "MOVED 16384 h:1", "MOVED 1 h:0",
                            "MOVED 1 h", "ASK 1 h:1x", "CLUSTERDOWN"}) {
        EXPECT_FALSE(remote::parse_redirect(bad, asked)) << bad;
    }
}

TEST(RedisUrls, NameServerDatabaseAndKey) {
    auto u = remote::parse_redis_url("redis://kc:p%40ss@cache.site:6380/3/team/kcache/v1/ab/cd");
    ASSERT_TRUE(u) << u.error();
    EXPECT_EQ(u->mode, remote::RedisMode::single);
    EXPECT_EQ(u->nodes, (std::vector<RedisNode>{{"cache.site", 6380}}));
    EXPECT_EQ(u->user, "kc");
    EXPECT_EQ(u->password, "p@ss");
    EXPECT_EQ(u->db, 3);
    EXPECT_EQ(u->key, "team/kcache/v1/ab/cd");
    EXPECT_EQ(u->server, "redis://cache.site:6380/3");  // no credentials

    auto plain = remote::parse_redis_url("redis://h/kcache/v1/ab/cd");
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->nodes.front().port, 6379);
    EXPECT_EQ(plain->db, 0);
    EXPECT_EQ(plain->key, "kcache/v1/ab/cd");
    EXPECT_FALSE(plain->has_password);

    auto cluster = remote::parse_redis_url("redis+cluster://:pw@a:7000,[::1]:7001/kcache/v1/x");
    ASSERT_TRUE(cluster) << cluster.error();
    EXPECT_EQ(cluster->mode, remote::RedisMode::cluster);
    EXPECT_EQ(cluster->nodes, (std::vector<RedisNode>{{"a", 7000}, {"::1", 7001}}));
    EXPECT_EQ(cluster->server, "redis+cluster://a:7000,[::1]:7001/0");
    EXPECT_TRUE(cluster->user.empty());
    EXPECT_EQ(cluster->password, "pw");
    EXPECT_TRUE(remote::parse_redis_url("rediss://h:6380")->tls);
}

TEST(RedisUrls, BadOnesAreRefusedWithoutQuotingThePassword) {
    for (const char* bad : {"redis://", "redis://h:0", "redis://h:99999", "redis://h:x",
                            "redis://a,b", "redis+cluster://h/2", "redis://u:%zz@h", "redis://[::1",
                            "redis://h/99999999999", "http://h"}) {
        auto u = remote::parse_redis_url(bad);
        EXPECT_FALSE(u) << bad;
    }
    auto u = remote::parse_redis_url("redis://u:secret@h:notaport");
    ASSERT_FALSE(u);
    EXPECT_EQ(u.error().find("secret"), std::string::npos) << u.error();
}

TEST(RedisUrls, ErrorRepliesMapOntoTheStatusesTheBreakerReads) {
    EXPECT_EQ(remote::redis_error_status("WRONGPASS invalid username-password pair"), 401);
    EXPECT_EQ(remote::redis_error_status("NOAUTH Authentication required."), 401);
    EXPECT_EQ(remote::redis_error_status("NOPERM this user has no permissions"), 403);
    EXPECT_EQ(remote::redis_error_status("READONLY You can't write against a read only replica."),
              403);
    EXPECT_EQ(remote::redis_error_status("LOADING Redis is loading the dataset"), 503);
    EXPECT_EQ(remote::redis_error_status("CLUSTERDOWN The cluster is down"), 503);
    EXPECT_EQ(remote::redis_error_status("OOM command not allowed"), 507);
    EXPECT_EQ(remote::redis_error_status("MOVED 1 h:1"), 421);
    EXPECT_EQ(remote::redis_error_status("ERR unknown command"), 500);
}

TEST(RedisBackends, TheTableServesRedisAndRefusesWhatThisBuildCannotDo) {
    EXPECT_TRUE(remote::scheme_supported("redis://h:6379/0"));
    EXPECT_TRUE(remote::scheme_supported("redis+cluster://h:7000"));
    remote::Settings s;
    s.base_urls = {"rediss://h:6380/0"};
    auto tls = remote::Client::open(s);
    ASSERT_FALSE(tls);
    EXPECT_EQ(tls.error().code, remote::RemoteErrc::config);
    EXPECT_NE(tls.error().message.find("no TLS"), std::string::npos) << tls.error().message;

    // A password crosses a link without TLS only when allowed, as a token
    // or URL credentials over plain http do.
    s.base_urls = {"redis://kc:hunter2@h:6379/0"};
    auto clear = remote::Client::open(s);
    ASSERT_FALSE(clear);
    EXPECT_EQ(clear.error().code, remote::RemoteErrc::config);
    EXPECT_NE(clear.error().message.find("KCACHE_REMOTE_ALLOW_HTTP_TOKEN"), std::string::npos);
    EXPECT_EQ(clear.error().message.find("hunter2"), std::string::npos) << clear.error().message;
    s.plain_http_token = remote::PlainHttpToken::allow;
    EXPECT_TRUE(remote::Client::open(s));

    s.base_urls = {"redis://h:notaport"};
    auto bad = remote::Client::open(s);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, remote::RemoteErrc::config);
}

}  // namespace
}  // namespace kcache::test
