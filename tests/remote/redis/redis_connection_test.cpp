// The Redis backend's connection against a real redis-server 7 started by
// each test: the warm-up's log-in ahead of the first request, a server that
// never answers it, and a forked child's connection of its own.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.hpp"
#include "kcache/remote/remote.hpp"
#include "redis_fixture.hpp"

namespace kcache::test {
namespace {

using remote::RemoteErrc;

// Client::warm_up logs in ahead (no command on a key), the first request
// uses that connection, and one the server dropped since is replaced, not
// counted as a failure.
TEST_F(RedisTest, AWarmUpLogsInAheadAndADroppedConnectionIsNoFailure) {
    ASSERT_TRUE(client(settings(server_->url()))
                    ->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    const std::string stats_before = cli({"INFO", "commandstats"});
    const long long before = connections();
    auto c = client(settings(server_->url()));
    c->warm_up(remote::WarmUp::now);
    const long long warmed = connections();
    EXPECT_EQ(warmed - before, 1 + 1);  // the warm-up's and this question's
    EXPECT_EQ(cli({"INFO", "commandstats"}).find("cmdstat_exists"),
              stats_before.find("cmdstat_exists"));  // no request for an object
    const long long asked = connections();
    ASSERT_TRUE(c->fetch(made_up_fields(1)));
    EXPECT_EQ(connections() - asked, 1);  // this question's: none of the fetch's own
    ASSERT_FALSE(cli({"CLIENT", "KILL", "TYPE", "normal"}).empty());
    auto got = c->fetch(made_up_fields(1));
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(c->counters().errors, 0u);
    EXPECT_TRUE(down_marks(dir() / "state").empty());
}

// A server that accepts and never answers the log-in: the warm-up waits
// for it once and makes no trial of its own (a second wait), leaving the
// server to the first request, which times out once and marks it down.
TEST_F(RedisTest, AServerThatNeverAnswersTheLogInCostsTheWarmUpOneWait) {
    auto silent = SilentServer::start();
    ASSERT_TRUE(silent);
    const std::string url = silent->url();
    auto s = settings("redis://kc:kc-secret@127.0.0.1:" + url.substr(url.rfind(':') + 1));
    s.plain_http_token = remote::PlainHttpToken::allow;
    s.timeout = std::chrono::milliseconds(300);
    auto c = client(s);
    ASSERT_TRUE(c);
    const auto start = std::chrono::steady_clock::now();
    c->warm_up(remote::WarmUp::now);
    EXPECT_LT(elapsed_ms(start), 2 * 300);
    EXPECT_EQ(c->counters().timeouts, 0u);
    EXPECT_TRUE(down_marks(dir() / "state").empty());
    auto got = c->fetch(made_up_fields(1));
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, RemoteErrc::timeout) << got.error().message;
    EXPECT_EQ(c->counters().timeouts, 1u);
    EXPECT_EQ(down_marks(dir() / "state").size(), 1u);
}

// A child forked after the warm-up opens a connection of its own: the
// parent's, shared, would interleave the replies of both.
TEST_F(RedisTest, AForkedChildNeverUsesItsParentsConnection) {
    ASSERT_TRUE(client(settings(server_->url()))
                    ->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    auto c = client(settings(server_->url()));
    c->warm_up(remote::WarmUp::now);
    const long long before = connections();
    const pid_t child = ::fork();
    ASSERT_NE(child, -1);
    if (child == 0) {
        ::_exit(c->fetch(made_up_fields(1)) ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(connections() - before, 1 + 1);  // the child's own, and this question's
    ASSERT_TRUE(c->fetch(made_up_fields(1)));  // the parent's connection, still its own
    EXPECT_EQ(c->counters().errors, 0u);
}

}  // namespace
}  // namespace kcache::test
