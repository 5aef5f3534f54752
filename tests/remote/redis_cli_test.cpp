// The CLI and the runtime on the Redis backend, against a real redis-server
// 7 started by each test: warm uploads every object (under a database, a key
// prefix and a TTL), a cold node pulls them and builds nothing; a wrong
// password fails open (the node compiles) and doctor shows the backend and
// where the password came from, never the password.

#include <gtest/gtest.h>

#include <sstream>

#include "cli_runner.hpp"
#include "redis_server.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

// A writer that may use kcache's keys with the commands the backend sends.
constexpr const char* kWriterAcl =
    "user kc on >kc-secret ~fleet/kcache/* resetchannels -@all +exists +strlen +getrange +set "
    "+del +select";

class RedisCli : public CliTest {
  protected:
    void SetUp() override {
        CliTest::SetUp();
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
    CliRun kcache(const std::vector<std::string>& args, std::vector<std::string> env = {}) {
        for (std::string& e : signing_env(dir() / "keys")) {
            env.push_back(std::move(e));
        }
        env.push_back("KCACHE_REMOTE_ALLOW_HTTP_TOKEN=1");  // loopback, no TLS
        return CliTest::kcache(args, env);
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
    EXPECT_EQ(ok, 6);  // signatures, backend, GET, HEAD, PUT, DELETE
}

}  // namespace
}  // namespace kcache::test
