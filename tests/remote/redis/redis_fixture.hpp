#pragma once
// The fixture of the Redis backend's tests: a real redis-server 7 started by
// each test on a free loopback port in its temporary directory.

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kcache/remote/remote.hpp"
#include "kcache/store/key.hpp"
#include "redis_server.hpp"
#include "remote_support.hpp"

namespace kcache::test {

class RedisTest : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        start({});
    }
    void start(RedisOptions o) {
        server_.reset();
        auto s = RedisServer::start(dir() / "redis", o);
        ASSERT_TRUE(s) << s.error();
        server_.emplace(std::move(*s));
    }
    std::unique_ptr<remote::Client> client(const remote::Settings& s) {
        auto c = remote::Client::open(s);
        EXPECT_TRUE(c) << c.error().message;
        return c ? std::move(*c) : nullptr;
    }
    remote::Settings settings(const std::string& url) {
        return test_settings(url, dir() / "state");
    }
    // redis-cli's answer to `args`, trimmed.
    std::string cli(const std::vector<std::string>& args) {
        auto out = server_->cli(args);
        EXPECT_TRUE(out) << out.error();
        std::string s = out ? *out : "";
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) {
            s.pop_back();
        }
        return s;
    }
    // Connections the server has accepted (this question's included).
    long long connections() {
        const std::string info = cli({"INFO", "stats"});
        return std::stoll(info.substr(info.find("total_connections_received:") + 27));
    }
    static std::string key_of(int n) {
        return remote::object_path(store::make_key(made_up_fields(n)));
    }
    std::optional<RedisServer> server_;
};

}  // namespace kcache::test
