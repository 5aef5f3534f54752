// The remote tier's rotating secret (remote/src/credential.hpp) without a
// server: a token file read again only when it changed, a token command run
// once per lifetime and again when asked to refresh, and the errors of a
// command that fails, prints nothing or hangs. What the servers make of it
// is in rotation_test.cpp.

#include "credential.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "remote_support.hpp"

namespace kcache::test {
namespace {

using remote::Credential;
using remote::RemoteErrc;

// The secret `c` gives now, or "error: " and why.
std::string secret(Credential& c) {
    auto now = c.current();
    return now ? *now : "error: " + now.error().message;
}

class CredentialTest : public TempDirTest {
  protected:
    remote::Settings settings() const {
        return test_settings("https://127.0.0.1:9/kcache", dir() / "state");
    }
    std::shared_ptr<Credential> open(const remote::Settings& s) {
        auto c = Credential::open(s);
        EXPECT_TRUE(c) << c.error().message;
        return c ? *c : nullptr;
    }
    void write(const std::string& name, const std::string& text) const {
        std::ofstream(dir() / name, std::ios::trunc) << text;
    }
    // A command that notes each run in `runs` and prints the file `tok`.
    std::string printing_command() const {
        return token_command_printing(dir() / "tok", dir() / "runs");
    }
    std::size_t runs() const { return line_count(dir() / "runs"); }
};

TEST_F(CredentialTest, ATokenFileIsReadAgainOnlyWhenItChanged) {
    write("token", "alpha\n");
    auto s = settings();
    s.token_file = dir() / "token";
    auto c = open(s);
    ASSERT_TRUE(c);
    for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(secret(*c), "alpha");
    }
    EXPECT_EQ(c->counts().file_reads, 1u);  // read at open; 50 requests stat it only

    write("token.new", "beta\n");  // rotated the usual way: a new file renamed over the old
    std::filesystem::rename(dir() / "token.new", dir() / "token");
    EXPECT_EQ(secret(*c), "beta");
    write("token", "gamma\n");  // rewritten in place
    EXPECT_EQ(secret(*c), "gamma");
    EXPECT_EQ(secret(*c), "gamma");
    EXPECT_EQ(c->counts().file_reads, 3u);
    EXPECT_EQ(c->counts().command_runs, 0u);
}

TEST_F(CredentialTest, ATokenFileThatGoesAwayKeepsTheTokenReadBefore) {
    write("token", "alpha\n");
    auto s = settings();
    s.token_file = dir() / "token";
    auto c = open(s);
    ASSERT_TRUE(c);
    std::filesystem::remove(dir() / "token");
    auto now = c->current();
    ASSERT_TRUE(now) << now.error().message;
    EXPECT_EQ(*now, "alpha");
    write("token", "beta\n");
    EXPECT_EQ(secret(*c), "beta");
}

TEST_F(CredentialTest, BadSettingsAreConfigErrorsThatNameTheCause) {
    write("empty", " \n");
    auto s = settings();
    s.token_file = dir() / "empty";
    auto empty = Credential::open(s);
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().code, RemoteErrc::config);
    EXPECT_NE(empty.error().message.find("holds no token"), std::string::npos);

    write("token", "alpha\n");
    s.token_file = dir() / "token";
    s.token_command = "echo beta";
    auto both = Credential::open(s);
    ASSERT_FALSE(both);
    EXPECT_NE(both.error().message.find("not both"), std::string::npos) << both.error().message;

    s.token_file.clear();
    s.token_lifetime = std::chrono::milliseconds(0);
    EXPECT_FALSE(Credential::open(s));
}

TEST_F(CredentialTest, ATokenCommandRunsOncePerLifetimeAndNotAtOpen) {
    write("tok", "alpha\n");
    auto s = settings();
    s.token_command = printing_command();
    s.token_lifetime = std::chrono::seconds(1);
    auto c = open(s);
    ASSERT_TRUE(c);
    EXPECT_TRUE(c->configured());
    EXPECT_EQ(runs(), 0u);  // opening a client runs nothing
    for (int i = 0; i < 20; ++i) {
        EXPECT_EQ(secret(*c), "alpha");
    }
    EXPECT_EQ(runs(), 1u);
    write("tok", "beta\n");
    EXPECT_EQ(secret(*c), "alpha");  // still fresh
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    EXPECT_EQ(secret(*c), "beta");
    EXPECT_EQ(runs(), 2u);
    EXPECT_EQ(c->counts().command_runs, 2u);
}

TEST_F(CredentialTest, AFailingCommandSaysHowItFailedAndIsNotRunAtEveryRequest) {
    auto s = settings();
    s.token_command = "echo run >> '" + (dir() / "runs").string() +
                      "'; echo 'no session: log in first' >&2; exit 3";
    auto c = open(s);
    ASSERT_TRUE(c);
    for (int i = 0; i < 5; ++i) {
        auto now = c->current();
        ASSERT_FALSE(now);
        EXPECT_EQ(now.error().code, RemoteErrc::config);
        EXPECT_NE(now.error().message.find("exited 3: no session: log in first"), std::string::npos)
            << now.error().message;
        EXPECT_NE(now.error().message.find("KCACHE_REMOTE_TOKEN_COMMAND"), std::string::npos);
    }
    EXPECT_EQ(runs(), 1u);  // tried again no sooner than a second later

    s.token_command = "true";  // exits 0, prints nothing
    auto silent = open(s);
    ASSERT_TRUE(silent);
    auto none = silent->current();
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().message.find("printed no token"), std::string::npos)
        << none.error().message;
}

TEST_F(CredentialTest, AHangingCommandIsKilledAtItsLimit) {
    auto s = settings();
    s.token_command = "sleep 60";
    auto c = open(s);
    ASSERT_TRUE(c);
    const auto start = std::chrono::steady_clock::now();
    auto now = c->current();
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(now);
    EXPECT_NE(now.error().message.find("ran past 10 s"), std::string::npos) << now.error().message;
    EXPECT_LT(took, std::chrono::seconds(30));  // the watchdog's bound, with a wide margin
}

TEST_F(CredentialTest, RefreshRunsTheCommandAgainAndSaysWhetherTheSecretChanged) {
    write("tok", "alpha\n");
    auto s = settings();
    s.token_command = printing_command();
    s.token_lifetime = std::chrono::hours(1);
    auto c = open(s);
    ASSERT_TRUE(c);
    EXPECT_EQ(secret(*c), "alpha");
    EXPECT_FALSE(c->refresh("alpha"));  // within a second of the last run: not run again
    EXPECT_EQ(runs(), 1u);
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    EXPECT_FALSE(c->refresh("alpha"));  // run again, and it gave the same
    EXPECT_EQ(runs(), 2u);
    write("tok", "beta\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    EXPECT_TRUE(c->refresh("alpha"));
    EXPECT_EQ(secret(*c), "beta");
    EXPECT_EQ(runs(), 3u);
}

}  // namespace
}  // namespace kcache::test
