// Client::warm_up over HTTP against a real nginx: the connection opened
// ahead carries the breaker's first trial (one HEAD) and then serves the
// first request; a node whose up mark is fresh sends no request at all; a
// connection the server closed meanwhile is no failure, a server the breaker
// skips is not connected, and a hanging server costs the node one timeout,
// the warm-up's or the first request's, never both.
// Also: a forked child never uses its parent's connections.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "kcache/remote/remote.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

using remote::RemoteErrc;
using remote::WarmUp;

// Established TCP connections of this network namespace to loopback port
// `port` (the client side of each: /proc/net/tcp lists both ends).
int connections_to(int port) {
    std::ifstream in("/proc/net/tcp");
    std::string line;
    std::getline(in, line);  // the header
    int n = 0;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string slot, local, remote, state;
        fields >> slot >> local >> remote >> state;
        const auto colon = remote.find(':');
        n += colon != std::string::npos && state == "01" &&
             std::stoi(remote.substr(colon + 1), nullptr, 16) == port;
    }
    return n;
}

int port_of(const std::string& url) {
    return std::stoi(url.substr(url.rfind(':') + 1));
}

class RemoteWarmUp : public RemoteServerTest {
  protected:
    // A client that uploaded object 1 and is gone: the next client's first
    // request finds it.
    void upload_first() {
        auto writer = client(test_settings(server_->url(), dir() / "writer-state"));
        ASSERT_TRUE(writer->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    }
    // Settings for `silent_` with a request timeout of `timeout`.
    remote::Settings hanging(Millis timeout) {
        auto s = test_settings(silent_->url(), dir() / "state");
        s.timeout = timeout;
        return s;
    }
    std::optional<SilentServer> silent_;  // accepts, never answers
};

// The breaker's first trial goes out in the warm-up, on the connection it
// opened: the first request finds the server confirmed (an up mark) and
// sends its GET on the same connection, with no trial of its own.
TEST_F(RemoteWarmUp, TheWarmUpTriesTheServerAndTheFirstRequestUsesItsConnection) {
    upload_first();
    const int port = port_of(server_->url());
    const std::size_t requests = server_->requests().size();
    auto c = client(test_settings(server_->url(), dir() / "state"));
    ASSERT_EQ(connections_to(port), 0);
    c->warm_up(WarmUp::now);
    EXPECT_EQ(connections_to(port), 1);
    ASSERT_EQ(server_->requests().size(), requests + 1);  // the trial
    EXPECT_EQ(server_->count("HEAD"), 1u);
    EXPECT_TRUE(std::filesystem::exists(breaker_file(dir() / "state", "up", server_->url())));
    EXPECT_EQ(c->counters().errors, 0u);  // its "not found" is the answer it asks for
    auto got = c->fetch(made_up_fields(1));
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->bytes, made_up_bytes(1));
    EXPECT_EQ(connections_to(port), 1);  // the same one, kept for the next request
    EXPECT_EQ(server_->requests().size(), requests + 2);
    EXPECT_EQ(c->counters().hits, 1u);
}

// A process of a node that confirmed the server within the breaker's window
// costs the server a connection, never a request, until it asks for one.
TEST_F(RemoteWarmUp, ANodeWithAFreshUpMarkSendsNoRequestAtWarmUp) {
    upload_first();
    const auto s = test_settings(server_->url(), dir() / "state");
    client(s)->warm_up(WarmUp::now);  // the node's first process: the trial
    const std::size_t requests = server_->requests().size();
    auto c = client(s);
    c->warm_up(WarmUp::now);
    EXPECT_EQ(server_->requests().size(), requests);
    ASSERT_TRUE(c->fetch(made_up_fields(1)));
    EXPECT_EQ(server_->requests().size(), requests + 1);
}

TEST_F(RemoteWarmUp, AConnectionTheServerClosedMeanwhileIsNoFailure) {
    upload_first();
    auto c = client(test_settings(server_->url(), dir() / "state"));
    c->warm_up(WarmUp::now);
    server_->stop();  // closes every connection, the one opened ahead too
    ASSERT_TRUE(server_->restart());
    auto got = c->fetch(made_up_fields(1));
    ASSERT_TRUE(got) << got.error().message;
    const remote::Counters k = c->counters();
    EXPECT_EQ(k.errors, 0u);
    EXPECT_EQ(k.timeouts, 0u);
    EXPECT_EQ(k.hits, 1u);
    EXPECT_TRUE(down_marks(dir() / "state").empty());
}

TEST_F(RemoteWarmUp, AServerTheBreakerSkipsIsNotConnected) {
    silent_ = SilentServer::start();
    ASSERT_TRUE(silent_);
    const remote::Settings s = hanging(Millis(300));
    {
        auto first = client(s);
        auto got = first->fetch(made_up_fields(1));  // times out: marked down
        ASSERT_FALSE(got);
        ASSERT_EQ(got.error().code, RemoteErrc::timeout);
    }
    ASSERT_EQ(down_marks(dir() / "state").size(), 1u);
    const int before = connections_to(port_of(silent_->url()));
    auto c = client(s);
    c->warm_up(WarmUp::now);
    EXPECT_EQ(connections_to(port_of(silent_->url())), before);
}

// A server that accepts and never answers, the warm-up on its thread and a
// request at once: whichever takes the breaker's trial times out, the other
// follows its down mark; one timeout in all, nothing waits for a second.
TEST_F(RemoteWarmUp, AHangingServerCostsTheFirstRequestOneTimeout) {
    silent_ = SilentServer::start();
    ASSERT_TRUE(silent_);
    auto c = client(hanging(Millis(500)));
    const auto start = std::chrono::steady_clock::now();
    c->warm_up();
    auto got = c->fetch(made_up_fields(1));
    ASSERT_FALSE(got);
    EXPECT_TRUE(got.error().code == RemoteErrc::timeout ||
                got.error().code == RemoteErrc::breaker_open)
        << got.error().message;
    EXPECT_LT(elapsed_ms(start), 2 * 500);
    c.reset();  // joins the warm-up, done with its trial or its skip
    EXPECT_LT(elapsed_ms(start), 2 * 500);
    EXPECT_EQ(remote::read_stats_file(dir() / "state").timeouts, 1u);
}

// The same server, warmed up before the first request: the warm-up's trial
// takes the timeout and marks the server down, and the request is skipped
// at once rather than timing out again.
TEST_F(RemoteWarmUp, AHangingServerFoundByTheWarmUpCostsTheRequestNoTimeout) {
    silent_ = SilentServer::start();
    ASSERT_TRUE(silent_);
    auto c = client(hanging(Millis(300)));
    c->warm_up(WarmUp::now);
    EXPECT_EQ(c->counters().timeouts, 1u);
    ASSERT_EQ(down_marks(dir() / "state").size(), 1u);
    const auto start = std::chrono::steady_clock::now();
    auto got = c->fetch(made_up_fields(1));
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, RemoteErrc::breaker_open) << got.error().message;
    EXPECT_LT(elapsed_ms(start), 100);
    EXPECT_EQ(c->counters().timeouts, 1u);
}

// A child forked after a request (its connection kept for the next one)
// opens a connection of its own rather than share its parent's.
TEST_F(RemoteWarmUp, AForkedChildNeverUsesItsParentsConnection) {
    upload_first();
    const int port = port_of(server_->url());
    auto c = client(test_settings(server_->url(), dir() / "state"));
    ASSERT_TRUE(c->fetch(made_up_fields(1)));
    ASSERT_EQ(connections_to(port), 1);
    const pid_t child = ::fork();
    ASSERT_NE(child, -1);
    if (child == 0) {
        const bool got = c->fetch(made_up_fields(1)).ok();
        ::_exit(got && connections_to(port) == 2 ? 0 : 1);  // its own beside the parent's
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_TRUE(c->fetch(made_up_fields(1)));
    EXPECT_EQ(c->counters().errors, 0u);
}

}  // namespace
}  // namespace kcache::test
