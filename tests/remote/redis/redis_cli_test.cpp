// The CLI and the runtime on the Redis backends, against real redis-server 7
// processes started by each test: warm uploads every object (under a
// database, a key prefix and a TTL), a cold node pulls them and builds
// nothing; push from a warmed store and pull into an empty one, on one
// server and on a cluster, after which an application's request hits that
// store; a wrong password fails open (the node compiles) and doctor shows
// the backend and where the password came from, never the password.

#include <gtest/gtest.h>

#include <sstream>

#include "cli_runner.hpp"
#include "redis_server.hpp"
#include "remote_support.hpp"
#include "signed_cli.hpp"

namespace kcache::test {
namespace {

// A writer that may use kcache's keys with the commands the backend sends.
constexpr const char* kWriterAcl =
    "user kc on >kc-secret ~fleet/kcache/* resetchannels -@all +exists +strlen +getrange +set "
    "+del +select";

// The CLI with the test's signing key, and the round trip every Redis
// backend must make.
class RedisCliTest : public SignedCliTest {
  protected:
    CliRun kcache(const std::vector<std::string>& args, std::vector<std::string> env = {}) {
        env.push_back("KCACHE_REMOTE_ALLOW_HTTP_TOKEN=1");  // loopback, no TLS
        return SignedCliTest::kcache(args, env);
    }
    // Warms store_dir() with no remote, pushes it to `remote` (a
    // KCACHE_REMOTE=… setting) and pulls it into an empty store; an
    // application then finds `dot` there, with no remote and no compile.
    // Returns how many objects went up.
    int push_then_pull(const std::string& remote) {
        const std::vector<std::string> dot{"--kernels", "dot", "--dtypes", "f32", "--json"};
        auto with = [](std::string command, const std::vector<std::string>& rest) {
            std::vector<std::string> args{std::move(command)};
            args.insert(args.end(), rest.begin(), rest.end());
            return args;
        };
        const CliRun warm = kcache(with("warm", dot));
        EXPECT_EQ(warm.code, 0) << warm.out << warm.err;
        const int built = warm.code == 0 ? static_cast<int>(warm.json()["built"]) : 0;
        EXPECT_GE(built, 1);
        const CliRun push = kcache({"push", "--json"}, {remote});
        EXPECT_EQ(push.code, 0) << push.out << push.err;
        EXPECT_EQ(push.json()["uploaded"], built);
        EXPECT_EQ(push.json()["failed"], 0);
        const CliRun again = kcache({"push", "--json"}, {remote});
        EXPECT_EQ(again.json()["already present"], built) << again.out << again.err;

        const auto cold = dir() / "cold";
        const CliRun pull = kcache(with("pull", dot), {remote, "KCACHE_DIR=" + cold.string()});
        EXPECT_EQ(pull.code, 0) << pull.out << pull.err;
        EXPECT_EQ(pull.json()["pulled"], built);
        EXPECT_EQ(pull.json()["failed"], 0);
        // An application of the node (libkcache.so, no remote): `dot` from
        // the store, a JIT only for its own kernel.
        const CliRun app = run_cli(KCACHE_TEST_WORKLOAD, {},
                                   {"KCACHE_DIR=" + cold.string(),
                                    std::string("KCACHE_JIT_PATH=") + KCACHE_TEST_JIT_PATH});
        EXPECT_EQ(app.code, 0) << app.out << app.err;
        EXPECT_EQ(app.out.rfind("user_store ok\n", 0), 0u) << app.out;
        EXPECT_NE(app.out.find("jit_compiles 1\n"), std::string::npos) << app.out;
        return built;
    }
};

class RedisCli : public RedisCliTest {
  protected:
    void SetUp() override {
        RedisCliTest::SetUp();
        auto s = RedisServer::start(
            dir() / "redis",
            {{kWriterAcl, "user admin on >admin-secret ~* +@all", "user default off"},
             false,
             "admin",
             "admin-secret"});
        ASSERT_TRUE(s) << s.error();
        server_.emplace(std::move(*s));
    }
    // KCACHE_REMOTE for user kc with `password`, database 1, key prefix fleet.
    std::string remote(const std::string& password = "kc-secret") const {
        return "KCACHE_REMOTE=redis://kc:" + password +
               "@127.0.0.1:" + std::to_string(server_->port()) + "/1/fleet";
    }
    std::vector<std::string> keys() {
        auto out = server_->cli({"-n", "1", "--scan", "--pattern", "fleet/kcache/v1/*"});
        EXPECT_TRUE(out) << out.error();
        std::vector<std::string> k;
        std::istringstream in(out ? *out : "");
        for (std::string line; std::getline(in, line);) {
            k.push_back(line);
        }
        return k;
    }
    std::optional<RedisServer> server_;
};

TEST_F(RedisCli, WarmUploadsEveryObjectAndAColdNodeBuildsNothing) {
    const CliRun warm = kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"},
                               {remote(), "KCACHE_REMOTE_TTL=1h"});
    ASSERT_EQ(warm.code, 0) << warm.out << warm.err;
    const int built = warm.json()["built"];
    ASSERT_GE(built, 1);
    EXPECT_EQ(warm.json()["remote_uploads"], built) << warm.err;
    const auto stored = keys();
    ASSERT_EQ(stored.size(), static_cast<std::size_t>(built));
    auto ttl = server_->cli({"-n", "1", "TTL", stored.front()});
    ASSERT_TRUE(ttl);
    EXPECT_GT(std::stoi(*ttl), 3500);  // an hour, in seconds
    EXPECT_LE(std::stoi(*ttl), 3600);

    const std::string cold = "KCACHE_DIR=" + (dir() / "cold").string();
    const CliRun pull =
        kcache({"pull", "--kernels", "dot", "--dtypes", "f32", "--json"}, {remote(), cold});
    ASSERT_EQ(pull.code, 0) << pull.out << pull.err;
    EXPECT_EQ(pull.json()["pulled"], built);
    const CliRun again =
        kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"}, {remote(), cold});
    ASSERT_EQ(again.code, 0) << again.out << again.err;
    EXPECT_EQ(again.json()["built"], 0);
    EXPECT_EQ(again.json()["already_cached"], built);
}

TEST_F(RedisCli, PushFromAWarmedStorePullIntoAnEmptyOneAndAnApplicationHitsThere) {
    const int pushed = push_then_pull(remote());
    EXPECT_EQ(keys().size(), static_cast<std::size_t>(pushed));
}

TEST_F(RedisCli, AWrongPasswordFailsOpenAndDoctorNamesNoPassword) {
    const std::string wrong = remote("not-the-password");
    const CliRun warm = kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"},
                               {wrong, "KCACHE_REMOTE_READONLY=1"});
    ASSERT_EQ(warm.code, 0) << warm.out << warm.err;  // compiled instead
    EXPECT_GE(warm.json()["built"], 1);
    EXPECT_EQ(warm.out.find("not-the-password"), std::string::npos);
    EXPECT_EQ(warm.err.find("not-the-password"), std::string::npos) << warm.err;

    const CliRun bad = kcache({"doctor", "--json"}, {wrong});
    EXPECT_EQ(bad.out.find("not-the-password"), std::string::npos) << bad.out;
    bool refused = false;
    for (const auto& f : bad.json()) {
        const std::string v = f["value"];
        refused = refused || (f["level"] == "problem" && v.find("WRONGPASS") != std::string::npos);
    }
    EXPECT_TRUE(refused) << bad.out;

    const CliRun good = kcache({"doctor", "--json"}, {remote()});
    EXPECT_EQ(good.out.find("kc-secret"), std::string::npos) << good.out;
    bool backend = false;
    int ok = 0;
    for (const auto& f : good.json()) {
        if (f["section"] != "remote") {
            continue;
        }
        const std::string name = f["name"];
        const std::string v = f["value"];
        EXPECT_EQ(f["level"], "ok") << f.dump();
        ok += f["level"] == "ok" ? 1 : 0;
        if (name.rfind("backend redis://kc:***@127.0.0.1:", 0) == 0) {
            backend = v.find("user kc, password from the URL") != std::string::npos &&
                      v.find("key prefix \"fleet/\"") != std::string::npos;
        }
    }
    EXPECT_TRUE(backend) << good.out;
    EXPECT_EQ(ok, 7);  // uploads, signatures, backend, GET, HEAD, PUT, DELETE
}

// Three masters with a replica each: the objects spread over the masters'
// slots, MOVED redirects followed by push and pull alike.
class RedisClusterCli : public RedisCliTest {
  protected:
    void SetUp() override {
        RedisCliTest::SetUp();
        ASSERT_TRUE(start_into(cluster_, RedisCluster::start(dir() / "cluster")));
    }
    std::optional<RedisCluster> cluster_;
};

TEST_F(RedisClusterCli, PushFromAWarmedStorePullIntoAnEmptyOneAndAnApplicationHitsThere) {
    push_then_pull("KCACHE_REMOTE=" + cluster_->url());
}

}  // namespace
}  // namespace kcache::test
