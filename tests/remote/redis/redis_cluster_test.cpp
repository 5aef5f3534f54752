// The Redis Cluster backend against a real cluster of 3 masters and 3
// replicas (redis-server 7, redis-cli --cluster create) started by each
// test: slots routed as the cluster routes them, a master killed and its
// replica promoted, a slot migrated (ASK, then MOVED) while clients read.

#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "kcache/remote/remote.hpp"
#include "kcache/store/key.hpp"
#include "redis/redis_cluster.hpp"
#include "redis_server.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

using remote::RemoteErrc;
using Clock = std::chrono::steady_clock;

constexpr int kEntries = 24;

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) {
        s.pop_back();
    }
    return s;
}

class RedisClusterTest : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        ASSERT_TRUE(start_into(cluster_, RedisCluster::start(dir() / "cluster")));
    }
    std::unique_ptr<remote::Client> client(Millis breaker = Millis(300)) {
        auto s = test_settings(cluster_->url(), dir() / "state");
        s.breaker_window = breaker;
        auto c = remote::Client::open(s);
        EXPECT_TRUE(c) << c.error().message;
        return c ? std::move(*c) : nullptr;
    }
    static std::string key_of(int n) {
        return remote::object_path(store::make_key(made_up_fields(n)));
    }
    // redis-cli on the server at `address`, trimmed; "" when it fails.
    std::string cli(const std::string& address, const std::vector<std::string>& args) {
        RedisServer* s = cluster_->server_at(address);
        EXPECT_NE(s, nullptr) << address;
        auto out = s ? s->cli(args) : Result<std::string, std::string>(fail(std::string("none")));
        EXPECT_TRUE(out) << out.error();
        return out ? trimmed(*out) : "";
    }
    ClusterNode master_of_key(int n) {
        auto m = cluster_->master_of(remote::key_slot(key_of(n)));
        EXPECT_TRUE(m) << m.error();
        return m ? *m : ClusterNode{};
    }
    std::optional<RedisCluster> cluster_;
};

TEST_F(RedisClusterTest, KeysOnEverySlotRangeGoStraightToTheirMaster) {
    auto c = client();
    ASSERT_TRUE(c);
    std::set<std::string> masters;
    for (int n = 0; n < kEntries; ++n) {
        ASSERT_TRUE(c->upload(made_up_fields(n), made_up_bytes(n, 4096), made_up_provenance()));
        const ClusterNode m = master_of_key(n);
        // Our slot is the cluster's, and the object sits on the slot's master.
        EXPECT_EQ(cli(m.address, {"CLUSTER", "KEYSLOT", key_of(n)}),
                  std::to_string(remote::key_slot(key_of(n))));
        EXPECT_EQ(cli(m.address, {"EXISTS", key_of(n)}), "1") << m.address;
        masters.insert(m.address);
    }
    EXPECT_EQ(masters.size(), 3u);  // every master's range got keys
    for (int n = 0; n < kEntries; ++n) {
        auto got = c->fetch(made_up_fields(n));
        ASSERT_TRUE(got) << n << ": " << got.error().message;
        EXPECT_EQ(got->bytes, made_up_bytes(n, 4096));
    }
    // Routed by the slot map: no request was redirected.
    for (const std::string& m : masters) {
        EXPECT_EQ(cli(m, {"INFO", "stats"}).find("unexpected_error_replies:1"), std::string::npos);
    }
    EXPECT_EQ(c->counters().errors, 0u);
}

// Client::warm_up loads the slot map and connects to every master ahead:
// first requests to keys on each master open no connection of their own.
TEST_F(RedisClusterTest, AWarmUpConnectsToEveryMasterAhead) {
    std::set<std::string> masters;
    {
        auto writer = client();
        for (int n = 0; n < kEntries; ++n) {
            ASSERT_TRUE(
                writer->upload(made_up_fields(n), made_up_bytes(n, 4096), made_up_provenance()));
            masters.insert(master_of_key(n).address);
        }
    }
    ASSERT_EQ(masters.size(), 3u);
    auto accepted = [&](const std::string& m) {
        const std::string info = cli(m, {"INFO", "stats"});  // its own connection included
        return std::stoll(info.substr(info.find("total_connections_received:") + 27));
    };
    std::map<std::string, long long> before;
    for (const std::string& m : masters) {
        before[m] = accepted(m);
    }
    auto c = client();
    c->warm_up(remote::WarmUp::now);
    std::map<std::string, long long> warmed;
    for (const std::string& m : masters) {
        warmed[m] = accepted(m);
        EXPECT_EQ(warmed[m] - before[m], 1 + 1) << m;  // the warm-up's and this question's
    }
    for (int n = 0; n < kEntries; ++n) {
        auto got = c->fetch(made_up_fields(n));
        ASSERT_TRUE(got) << n << ": " << got.error().message;
    }
    for (const std::string& m : masters) {
        EXPECT_EQ(accepted(m) - warmed[m], 1) << m;  // this question's alone
    }
    EXPECT_EQ(c->counters().errors, 0u);
}

// The warm-up is also the breaker's first trial of every master (a probe
// key's EXISTS on each): a process's first request to any master finds it
// confirmed and waits for no trial of its own.
TEST_F(RedisClusterTest, AWarmUpTriesEveryMasterForTheBreaker) {
    auto c = client(Millis(30000));
    c->warm_up(remote::WarmUp::now);
    std::set<std::string> masters;
    for (int slot : {0, remote::kClusterSlots / 2, remote::kClusterSlots - 1}) {
        auto m = cluster_->master_of(slot);
        ASSERT_TRUE(m) << m.error();
        masters.insert(m->address);
    }
    ASSERT_EQ(masters.size(), 3u);
    for (const std::string& m : masters) {
        EXPECT_TRUE(std::filesystem::exists(breaker_file(dir() / "state", "up", "redis://" + m)))
            << m;
    }
    EXPECT_EQ(c->counters().errors, 0u);
}

TEST_F(RedisClusterTest, AKilledMasterCostsAMissPerWindowUntilItsReplicaIsFollowed) {
    auto c = client();
    ASSERT_TRUE(c);
    for (int n = 0; n < kEntries; ++n) {
        ASSERT_TRUE(c->upload(made_up_fields(n), made_up_bytes(n, 4096), made_up_provenance()));
    }
    const ClusterNode victim = master_of_key(0);
    // Let the replica catch up before its master dies (replication is asynchronous).
    std::this_thread::sleep_for(Millis(300));
    cluster_->server_at(victim.address)->kill();
    const auto start = Clock::now();
    int failed = 0;
    while (!c->fetch(made_up_fields(0)) && Clock::now() - start < std::chrono::seconds(20)) {
        ++failed;
        std::this_thread::sleep_for(Millis(50));
    }
    ASSERT_LT(Clock::now() - start, std::chrono::seconds(20)) << "the client never followed";
    EXPECT_GE(failed, 1);
    const ClusterNode promoted = master_of_key(0);
    EXPECT_NE(promoted.address, victim.address);
    for (int n = 0; n < kEntries; ++n) {
        auto got = c->fetch(made_up_fields(n));
        ASSERT_TRUE(got) << n << ": " << got.error().message;
    }
    // A refused connection costs no timeout; the breaker let at most one
    // request through per 300 ms window while the cluster failed over.
    const auto n = c->counters();
    EXPECT_EQ(n.timeouts, 0u);
    EXPECT_LE(n.errors, 1 + static_cast<std::uint64_t>(elapsed_ms(start) / 300)) << n.errors;
}

TEST_F(RedisClusterTest, ASlotMigratedWhileClientsReadIsFollowedThroughAskThenMoved) {
    auto c = client();
    ASSERT_TRUE(c);
    for (int n = 0; n < 8; ++n) {
        ASSERT_TRUE(c->upload(made_up_fields(n), made_up_bytes(n, 4096), made_up_provenance()));
    }
    const int slot = remote::key_slot(key_of(0));
    const ClusterNode source = master_of_key(0);
    ClusterNode target;
    const auto nodes = cluster_->nodes();
    ASSERT_TRUE(nodes) << nodes.error();
    for (const ClusterNode& m : *nodes) {
        if (m.master && !m.failed && m.address != source.address) {
            target = m;
        }
    }
    ASSERT_FALSE(target.id.empty());
    std::atomic<bool> stop{false};
    std::atomic<int> hits{0}, misses{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 2; ++t) {
        readers.emplace_back([&, t] {
            while (!stop) {
                auto got = c->fetch(made_up_fields((t * 3) % 8));
                (got ? hits : misses)++;
                if (!got) {
                    ADD_FAILURE() << got.error().message;
                }
            }
        });
    }
    const std::string s = std::to_string(slot);
    EXPECT_EQ(cli(target.address, {"CLUSTER", "SETSLOT", s, "IMPORTING", source.id}), "OK");
    EXPECT_EQ(cli(source.address, {"CLUSTER", "SETSLOT", s, "MIGRATING", target.id}), "OK");
    std::this_thread::sleep_for(Millis(200));
    const auto colon = target.address.find(':');
    EXPECT_EQ(
        cli(source.address, {"MIGRATE", target.address.substr(0, colon),
                             target.address.substr(colon + 1), "", "0", "5000", "KEYS", key_of(0)}),
        "OK");
    std::this_thread::sleep_for(Millis(300));  // the source answers ASK now
    const std::string asks = cli(target.address, {"INFO", "commandstats"});
    EXPECT_NE(asks.find("cmdstat_asking:calls="), std::string::npos) << asks;
    // The target first, then the source, then the others (the order the
    // cluster specification gives: the target must own the slot before the
    // source sends clients to it).
    std::vector<std::string> order{target.address, source.address};
    for (const ClusterNode& m : *nodes) {
        if (m.master && !m.failed && m.address != target.address && m.address != source.address) {
            order.push_back(m.address);
        }
    }
    for (const std::string& address : order) {
        EXPECT_EQ(cli(address, {"CLUSTER", "SETSLOT", s, "NODE", target.id}), "OK");
    }
    std::this_thread::sleep_for(Millis(300));  // the source answers MOVED now
    stop = true;
    for (auto& r : readers) {
        r.join();
    }
    EXPECT_EQ(misses, 0);
    EXPECT_GT(hits, 10);
    EXPECT_EQ(master_of_key(0).address, target.address);
    EXPECT_EQ(cli(target.address, {"EXISTS", key_of(0)}), "1");
    EXPECT_TRUE(c->fetch(made_up_fields(0)));
    EXPECT_EQ(c->counters().errors, 0u);
}

// A master that hangs (stopped, its connections open): the first request to
// its slots costs one timeout, then its breaker skips it for the window,
// while the other masters' keys are still served, one at a time and in
// batches. Measured within the cluster's node timeout (before a failover).
TEST_F(RedisClusterTest, AHangingMasterCostsOneTimeoutAndTheOtherNodesStillServe) {
    auto s = test_settings(cluster_->url(), dir() / "state");
    s.breaker_window = Millis(60'000);
    s.timeout = Millis(250);
    auto opened = remote::Client::open(s);
    ASSERT_TRUE(opened) << opened.error().message;
    remote::Client& c = **opened;
    std::vector<store::KeyFields> all;
    for (int n = 0; n < kEntries; ++n) {
        ASSERT_TRUE(c.upload(made_up_fields(n), made_up_bytes(n, 4096), made_up_provenance()));
        all.push_back(made_up_fields(n));
    }
    const ClusterNode victim = master_of_key(0);
    std::vector<int> others;
    for (int n = 1; n < kEntries; ++n) {
        if (master_of_key(n).address != victim.address) {
            others.push_back(n);
        }
    }
    ASSERT_GE(others.size(), 4u);
    RedisServer* hung = cluster_->server_at(victim.address);
    ASSERT_NE(hung, nullptr);
    ASSERT_EQ(::kill(hung->pid(), SIGSTOP), 0);
    const auto start = Clock::now();
    EXPECT_FALSE(c.fetch(made_up_fields(0)));
    int served = 0, missed = 0;
    while (Clock::now() - start < Millis(600)) {
        EXPECT_FALSE(c.fetch(made_up_fields(0)));
        for (int n : others) {
            (c.fetch(made_up_fields(n)) ? served : missed)++;
        }
    }
    const auto batch = c.fetch_many(all);
    ::kill(hung->pid(), SIGCONT);
    EXPECT_EQ(c.counters().timeouts, 1u);
    EXPECT_EQ(missed, 0);
    EXPECT_GE(served, static_cast<int>(others.size()));
    for (int n : others) {
        EXPECT_TRUE(batch[n]) << n << ": " << batch[n].error().message;
    }
    ASSERT_FALSE(batch[0]);
    EXPECT_EQ(batch[0].error().code, RemoteErrc::breaker_open) << batch[0].error().message;
    EXPECT_TRUE(std::filesystem::exists(
        breaker_file(dir() / "state", "down", "redis://" + victim.address)));
}

}  // namespace
}  // namespace kcache::test
