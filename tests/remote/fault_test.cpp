// The remote client when the server is down, hangs, or cannot be trusted:
// bounded requests, the breaker shared by the node's processes, TLS.

#include <gtest/gtest.h>

#include <fstream>

#include "child_process.hpp"
#include "kcache/remote/remote.hpp"
#include "remote_support.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

using remote::RemoteErrc;
using Clock = std::chrono::steady_clock;

std::unique_ptr<remote::Client> open_client(const remote::Settings& s) {
    auto c = remote::Client::open(s);
    EXPECT_TRUE(c) << c.error().message;
    return c ? std::move(*c) : nullptr;
}

class RemoteFault : public TempDirTest {};

// A child on the same node (the same state directory) asks once and reports
// the error code and how long the request took.
void report_one_fetch() {
    auto s = test_settings(child_env("URL"), child_env("STATE"));
    s.timeout = Millis(std::stoi(child_env("TIMEOUT_MS")));
    s.breaker_window = Millis(60'000);
    auto c = open_client(s);
    ASSERT_TRUE(wait_for_start_gate());
    const auto start = Clock::now();
    auto got = c->fetch(made_up_fields(1));
    report_line(std::string(got ? "hit" : remote::to_string(got.error().code)) + " " +
                std::to_string(elapsed_ms(start)));
}

TEST_F(RemoteFault, SilentServerIsBoundedByTheTimeoutAndTheBreakerSparesOtherProcesses) {
    if (child_role() == "fetch") {
        report_one_fetch();
        return;
    }
    auto silent = SilentServer::start();
    ASSERT_TRUE(silent);
    auto s = test_settings(silent->url(), dir() / "state");
    s.timeout = Millis(400);
    s.breaker_window = Millis(60'000);
    auto c = open_client(s);
    auto start = Clock::now();
    auto got = c->fetch(made_up_fields(1));
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, RemoteErrc::timeout) << got.error().message;
    EXPECT_GE(elapsed_ms(start), 350);
    EXPECT_LT(elapsed_ms(start), 5000);  // bounded by the timeout (generous margin)
    EXPECT_EQ(c->counters().timeouts, 1u);
    start = Clock::now();
    got = c->fetch(made_up_fields(2));
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, RemoteErrc::breaker_open);
    // Four other processes of the node, inside the window: none sends a request.
    auto group = ChildGroup::spawn(
        4, "fetch",
        {{"URL", silent->url()}, {"STATE", (dir() / "state").string()}, {"TIMEOUT_MS", "400"}});
    group.release();
    for (const auto& r : group.wait_all(std::chrono::seconds(60))) {
        ASSERT_TRUE(r.ok()) << r.describe();
        ASSERT_EQ(r.lines.size(), 1u);
        EXPECT_EQ(r.lines[0].substr(0, r.lines[0].find(' ')), "breaker_open") << r.lines[0];
    }
}

// Eight processes of a fresh node start at the same instant against a server
// that never answers: the server is unconfirmed, so one of them tries it and
// the others wait for its answer, then follow the mark it left. One timeout
// for the node, and nobody waits much past one timeout.
TEST_F(RemoteFault, ProcessesStartingTogetherAgainstAHangingServerPayOneTimeout) {
    if (child_role() == "fetch") {
        report_one_fetch();
        return;
    }
    auto silent = SilentServer::start();
    ASSERT_TRUE(silent);
    auto group = ChildGroup::spawn(
        8, "fetch",
        {{"URL", silent->url()}, {"STATE", (dir() / "state").string()}, {"TIMEOUT_MS", "500"}});
    group.release();
    int timeouts = 0, skipped = 0;
    for (const auto& r : group.wait_all(std::chrono::seconds(60))) {
        ASSERT_TRUE(r.ok()) << r.describe();
        ASSERT_EQ(r.lines.size(), 1u);
        const std::string code = r.lines[0].substr(0, r.lines[0].find(' '));
        timeouts += code == "timeout" ? 1 : 0;
        skipped += code == "breaker_open" ? 1 : 0;
        EXPECT_LT(std::stoi(r.lines[0].substr(r.lines[0].find(' ') + 1)), 5000) << r.lines[0];
    }
    EXPECT_EQ(timeouts, 1);
    EXPECT_EQ(skipped, 7);
}

// Once the server has answered, requests go out at once: the up mark
// confirms it for the window, and no request waits for a trial.
TEST_F(RemoteFault, AnsweringServerIsConfirmedForTheWindow) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    auto s = test_settings(server->url(), dir() / "state");
    s.breaker_window = Millis(60'000);
    auto c = open_client(s);
    EXPECT_EQ(c->fetch(made_up_fields(1)).error().code, RemoteErrc::not_found);
    EXPECT_TRUE(std::filesystem::exists(breaker_file(dir() / "state", "up", server->url())));
    EXPECT_TRUE(down_marks(dir() / "state").empty());
    ASSERT_TRUE(c->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    EXPECT_TRUE(c->fetch(made_up_fields(1)));
}

TEST_F(RemoteFault, StoppedServerIsSkippedForTheWindowThenTriedAgain) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    auto s = test_settings(server->url(), dir() / "state");
    s.breaker_window = Millis(300);
    auto c = open_client(s);
    ASSERT_TRUE(c->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    server->stop();
    auto got = c->fetch(made_up_fields(1));
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, RemoteErrc::unreachable);
    EXPECT_EQ(c->fetch(made_up_fields(1)).error().code, RemoteErrc::breaker_open);
    ASSERT_TRUE(server->restart());
    std::this_thread::sleep_for(Millis(400));  // the window passes: one trial request
    EXPECT_TRUE(c->fetch(made_up_fields(1)));
    EXPECT_TRUE(down_marks(dir() / "state").empty());
    EXPECT_TRUE(c->fetch(made_up_fields(1)));
    const auto n = c->counters();
    EXPECT_EQ(n.hits, 2u);
    EXPECT_EQ(n.misses, 2u);
    EXPECT_EQ(n.errors, 1u);
}

TEST_F(RemoteFault, EightProcessesUploadAndFetchTheSameKeysAtOnce) {
    if (child_role() == "writer") {
        auto c = open_client(test_settings(child_env("URL"), child_env("STATE")));
        ASSERT_TRUE(wait_for_start_gate());
        for (int n = 0; n < 10; ++n) {
            auto up = c->upload(made_up_fields(n), made_up_bytes(n), made_up_provenance());
            ASSERT_TRUE(up) << up.error().message;
            auto got = c->fetch(made_up_fields((n + 5 * child_index()) % 10));
            ASSERT_TRUE(got || got.error().code == RemoteErrc::not_found) << got.error().message;
        }
        return;
    }
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    auto group = ChildGroup::spawn(8, "writer",
                                   {{"URL", server->url()}, {"STATE", (dir() / "state").string()}});
    group.release();
    for (const auto& r : group.wait_all(std::chrono::seconds(120))) {
        EXPECT_TRUE(r.ok()) << r.describe();
    }
    EXPECT_EQ(server->count("PUT"), 80u);
    auto c = open_client(test_settings(server->url(), dir() / "state"));
    for (int n = 0; n < 10; ++n) {  // concurrent PUTs of one key left one whole object
        auto got = c->fetch(made_up_fields(n));
        ASSERT_TRUE(got) << n << ": " << got.error().message;
        EXPECT_EQ(got->bytes, made_up_bytes(n));
    }
    const auto total = remote::read_stats_file(dir() / "state");  // 9 clients' counters merged
    EXPECT_EQ(total.uploads, 80u);
    EXPECT_EQ(total.corrupt, 0u);
}

class RemoteTls : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        ASSERT_TRUE(make_self_signed_cert(dir() / "ca"));
        NginxOptions o;
        o.tls_cert = dir() / "ca" / "cert.pem";
        o.tls_key = dir() / "ca" / "key.pem";
        server_ = start_nginx(dir() / "nginx", o);
        ASSERT_TRUE(server_);
        ASSERT_EQ(server_->url().rfind("https://", 0), 0u);
    }
    std::optional<NginxServer> server_;
};

TEST_F(RemoteTls, SelfSignedCertificateIsTrustedThroughTheConfiguredCa) {
    auto s = test_settings(server_->url(), dir() / "state");
    s.ca_file = dir() / "ca" / "cert.pem";
    std::ofstream(dir() / "token") << "s3cret\n";
    s.token_file = dir() / "token";  // allowed: https
    auto c = open_client(s);
    ASSERT_TRUE(c->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    auto got = c->fetch(made_up_fields(1));
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->bytes, made_up_bytes(1));
}

TEST_F(RemoteTls, WrongCaIsRefused) {
    ASSERT_TRUE(make_self_signed_cert(dir() / "other"));
    auto s = test_settings(server_->url(), dir() / "state");
    s.ca_file = dir() / "other" / "cert.pem";
    auto c = open_client(s);
    auto up = c->upload(made_up_fields(2), made_up_bytes(2), made_up_provenance());
    ASSERT_FALSE(up);
    EXPECT_EQ(up.error().code, RemoteErrc::tls) << up.error().message;
    EXPECT_EQ(server_->count("PUT"), 0u);
    EXPECT_FALSE(
        std::filesystem::exists(server_->object_file(store::make_key(made_up_fields(2)).hex())));
}

TEST_F(RemoteTls, SystemCasRefuseASelfSignedCertificate) {
    auto c = open_client(test_settings(server_->url(), dir() / "state"));
    auto got = c->fetch(made_up_fields(3));
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, RemoteErrc::tls) << got.error().message;
}

// Two shards, one of them hanging: its keys cost one timeout for the
// breaker window, and the other shard's keys are still served (a breaker
// per server, not one for the tier).
TEST_F(RemoteFault, AHangingShardCostsOneTimeoutAndTheOtherShardStillServes) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    auto silent = SilentServer::start();
    ASSERT_TRUE(silent);
    auto s = test_settings(server->url(), dir() / "state");
    s.base_urls = {server->url(), silent->url()};
    s.timeout = Millis(500);
    s.breaker_window = Millis(60'000);
    auto c = open_client(s);
    std::vector<int> up, hanging;
    for (int n = 0; n < 40 && (up.size() < 4 || hanging.size() < 4); ++n) {
        const bool on_server = c->shard_for(store::make_key(made_up_fields(n))) == server->url();
        if (on_server) {
            ASSERT_TRUE(c->upload(made_up_fields(n), made_up_bytes(n), made_up_provenance()));
        }
        (on_server ? up : hanging).push_back(n);
    }
    ASSERT_GE(hanging.size(), 2u);
    for (int round = 0; round < 3; ++round) {
        for (int n : hanging) {
            EXPECT_FALSE(c->fetch(made_up_fields(n)));
        }
        for (int n : up) {
            auto got = c->fetch(made_up_fields(n));
            EXPECT_TRUE(got) << n << ": " << got.error().message;
        }
    }
    EXPECT_EQ(c->counters().timeouts, 1u);
    EXPECT_EQ(down_marks(dir() / "state").size(), 1u);
    EXPECT_TRUE(std::filesystem::exists(breaker_file(dir() / "state", "down", silent->url())));
}

}  // namespace
}  // namespace kcache::test
