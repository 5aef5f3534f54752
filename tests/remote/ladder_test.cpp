// The remote rung of the ladder on PoCL with real compiles, against a real
// nginx: the fleet round trip across processes, a server stopped or hanging
// mid-run, corrupt objects, read-only clients, strict mode, 8 processes.
// (Forged and wrong objects: ladder_forged_test.cpp.)

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "remote_ladder.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

// A node process: asks for scale kernels `SALTS` (comma-separated) with the
// store in DIR and the remote URL, checks each program runs, reports
// "<salt> <rung> <key>" lines and then "uploads N".
void run_node(cl_context context, cl_device_id device) {
    Config c;
    c.canary = CanaryPolicy::off;  // the driver canary has tests of its own
    c.dir = child_env("DIR");
    if (child_env("PER_CHILD") == "1") {
        c.dir /= std::to_string(child_index());
    }
    c.jit_helper = jit_helper_path();
    c.jit_timeout = std::chrono::milliseconds(180'000);  // 8 at once on a loaded 2-core VM
    c = remote_config(c, child_env("URL"));
    c.remote_timeout = std::chrono::milliseconds(std::stoi(child_env("TIMEOUT_MS")));
    Outcome opened;
    auto cache = Cache::open(c, &opened);
    ASSERT_TRUE(cache) << opened.message;
    ASSERT_TRUE(wait_for_start_gate());
    std::string salts = child_env("SALTS");
    for (std::size_t pos = 0; pos < salts.size();) {
        auto end = salts.find(',', pos);
        const int salt = std::stoi(salts.substr(pos, end - pos));
        pos = end == std::string::npos ? salts.size() : end + 1;
        auto p = cache->program(context, device, scale_request(salt));
        ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
        ASSERT_FLOAT_EQ(run_scale(context, device, p.get(), 2.0f), 4.0f + salt);
        report_line(std::to_string(salt) + " " + to_string(p.outcome().rung) + " " +
                    p.outcome().key + " " + miss_of(p.outcome(), Rung::remote));
    }
    cache->drain(std::chrono::seconds(20));
    report_line("uploads " + std::to_string(cache->stats().remote_uploads));
}

// Runs `n` node processes at once and returns their reports (each must succeed).
std::vector<std::vector<std::string>> nodes(int n, std::map<std::string, std::string> env) {
    env.emplace("TIMEOUT_MS", "2000");
    auto group = ChildGroup::spawn(n, "node", env);
    group.release();
    std::vector<std::vector<std::string>> out;
    for (const auto& r : group.wait_all(std::chrono::seconds(240))) {
        EXPECT_TRUE(r.ok()) << r.describe();
        out.push_back(r.lines);
    }
    return out;
}

// The rung word of report line `line` ("<salt> <rung> <key> <why>").
std::string rung_word(const std::string& line) {
    auto a = line.find(' ');
    return line.substr(a + 1, line.find(' ', a + 1) - a - 1);
}

TEST_F(RemoteLadder, FleetRoundTripWarmerRemoteHitsThenLocalHits) {
    if (child_role() == "node") {
        run_node(context_, device_);
        return;
    }
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    const std::string salts = "1,2,3";
    auto a = nodes(1, {{"DIR", (dir() / "a").string()}, {"URL", server->url()}, {"SALTS", salts}});
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(a[0].size(), 4u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(rung_word(a[0][i]), "jit") << a[0][i];
    }
    EXPECT_EQ(a[0][3], "uploads 3");
    EXPECT_EQ(server->count("PUT"), 3u);

    // B: an empty store on another node: every kernel is a verified remote hit.
    const std::size_t gets_before = server->count("GET");  // A's three misses
    const auto b_dir = (dir() / "b").string();
    auto b = nodes(1, {{"DIR", b_dir}, {"URL", server->url()}, {"SALTS", salts}});
    ASSERT_EQ(b[0].size(), 4u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(rung_word(b[0][i]), "remote") << b[0][i];
    }
    EXPECT_EQ(b[0][3], "uploads 0");
    EXPECT_EQ(server->count("GET"), gets_before + 3);
    EXPECT_EQ(server->count("PUT"), 3u);

    // C: a second process on B's node hits the backfilled store; no remote traffic.
    const std::size_t before = server->requests().size();
    auto c = nodes(1, {{"DIR", b_dir}, {"URL", server->url()}, {"SALTS", salts}});
    ASSERT_EQ(c[0].size(), 4u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(rung_word(c[0][i]), "user_store") << c[0][i];
    }
    EXPECT_EQ(server->requests().size(), before);
}

TEST_F(RemoteLadder, ServerStoppedMidRunEveryRequestIsAnsweredByJit) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    {
        auto warmer = Cache::open(remote_config(config("a"), server->url()));
        ASSERT_TRUE(warmer);
        ASSERT_TRUE(warmer->program(context_, device_, scale_request(10)).ok());
    }  // closing flushes the upload
    auto cache = Cache::open(remote_config(config("b"), server->url()));
    ASSERT_TRUE(cache);
    auto hit = cache->program(context_, device_, scale_request(10));
    EXPECT_EQ(hit.outcome().rung, Rung::remote) << miss_of(hit.outcome(), Rung::remote);
    server->stop();
    for (int salt : {11, 12, 13}) {
        auto p = cache->program(context_, device_, scale_request(salt));
        ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
        EXPECT_EQ(p.outcome().rung, Rung::jit);
        const std::string why = miss_of(p.outcome(), Rung::remote);
        EXPECT_NE(why.find(salt == 11 ? "unreachable" : "breaker_open"), std::string::npos)
            << salt << ": " << why;
        EXPECT_FLOAT_EQ(run_scale(context_, device_, p.get(), 1.0f), 2.0f + salt);
    }
    EXPECT_EQ(cache->stats().remote_errors, 1u);
    EXPECT_EQ(cache->stats().remote_hits, 1u);
}

TEST_F(RemoteLadder, HangingServerCostsOneTimeoutThenOtherProcessesSkipIt) {
    if (child_role() == "node") {
        run_node(context_, device_);
        return;
    }
    auto silent = SilentServer::start();
    ASSERT_TRUE(silent);
    auto c = remote_config(config("node"), silent->url());
    c.remote_timeout = std::chrono::milliseconds(500);
    auto cache = Cache::open(c);
    ASSERT_TRUE(cache);
    auto p = cache->program(context_, device_, scale_request(20));
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    // The open's warm-up and this request race for the breaker's one trial:
    // whichever takes it times out, the other follows its down mark.
    const std::string why = miss_of(p.outcome(), Rung::remote);
    EXPECT_TRUE(why.find("timeout") != std::string::npos ||
                why.find("breaker_open") != std::string::npos)
        << why;
    EXPECT_EQ(cache->stats().remote_timeouts, 1u);
    // Another process on the node, inside the window: no request, no timeout.
    auto other = nodes(1, {{"DIR", c.dir.string()}, {"URL", silent->url()}, {"SALTS", "21,22"}});
    ASSERT_EQ(other[0].size(), 3u);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(rung_word(other[0][i]), "jit") << other[0][i];
        EXPECT_NE(other[0][i].find("breaker_open"), std::string::npos) << other[0][i];
    }
}

// On a CPU device each compile uploads once, the best binary it has: the
// warmed one when the warm-up after the answer works (kcache warm's tests),
// else the answer's. Here the warm-up launch never ends (the kernel spins),
// so the answer's binary goes up once the deadline ends the warm-up.
TEST_F(RemoteLadder, AWarmupThatFailsAfterTheAnswerStillUploadsTheAnswer) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    auto cache = Cache::open(remote_config(config("a"), server->url()));
    ASSERT_TRUE(cache);
    SourceRequest spin;
    spin.name = "spin";
    spin.source =
        "__kernel void spin(volatile __global int* flag) {\n"
        "    while (flag[0] == 0) { }\n"
        "}\n";
    spin.entry_points = {"spin"};
    spin.warmup_local_size = 1;
    spin.deadline = std::chrono::milliseconds(8000);
    auto p = cache->program(context_, device_, spin);
    ASSERT_TRUE(p.ok()) << p.outcome().message;
    EXPECT_EQ(p.outcome().rung, Rung::jit);
    cache->drain(std::chrono::seconds(60));
    EXPECT_EQ(cache->stats().warmed_later, 0u);
    EXPECT_EQ(cache->stats().remote_uploads, 1u);
    EXPECT_EQ(server->count("PUT"), 1u);
    EXPECT_TRUE(std::filesystem::exists(server->object_file(p.outcome().key)));
}

TEST_F(RemoteLadder, CorruptObjectIsRejectedCountedThenJit) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    std::string key;
    {
        auto warmer = Cache::open(remote_config(config("a"), server->url()));
        key = warmer->program(context_, device_, scale_request(30)).outcome().key;
    }
    ASSERT_TRUE(std::filesystem::exists(server->object_file(key)));
    flip_byte_from_end(server->object_file(key), 5);
    auto cache = Cache::open(remote_config(config("b"), server->url()));
    auto p = cache->program(context_, device_, scale_request(30));
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    EXPECT_EQ(p.outcome().rung, Rung::jit);
    EXPECT_NE(miss_of(p.outcome(), Rung::remote).find("corrupt"), std::string::npos);
    EXPECT_EQ(cache->stats().remote_corrupt, 1u);
    EXPECT_FLOAT_EQ(run_scale(context_, device_, p.get(), 1.0f), 32.0f);
}

TEST_F(RemoteLadder, ReadOnlyClientNeverUploadsAndRefusedWritesAreNotFatal) {
    NginxOptions refusing;
    refusing.read_only = true;  // limit_except GET HEAD
    auto server = start_nginx(dir() / "nginx", refusing);
    ASSERT_TRUE(server);
    auto ro = remote_config(config("ro"), server->url());
    ro.remote_read_only = true;
    {
        auto cache = Cache::open(ro);
        ASSERT_EQ(cache->program(context_, device_, scale_request(40)).outcome().rung, Rung::jit);
        cache->drain(std::chrono::seconds(10));
        EXPECT_EQ(cache->stats().remote_upload_failures, 0u);
    }
    EXPECT_EQ(server->count("PUT"), 0u);
    auto cache = Cache::open(remote_config(config("rw"), server->url()));
    auto p = cache->program(context_, device_, scale_request(41));
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    cache->drain(std::chrono::seconds(10));
    EXPECT_EQ(cache->stats().remote_upload_failures, 1u);
    EXPECT_EQ(cache->stats().remote_uploads, 0u);
    EXPECT_EQ(server->count("PUT"), 1u);
}

TEST_F(RemoteLadder, RequiredModeTurnsRemoteErrorsIntoErrors) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    auto strict = remote_config(config("strict"), server->broken_url());
    strict.remote_required = true;
    auto cache = Cache::open(strict);
    auto p = cache->program(context_, device_, scale_request(50));
    EXPECT_EQ(p.outcome().status, StatusCode::store_error);
    EXPECT_NE(p.outcome().message.find("KCACHE_REMOTE_REQUIRED"), std::string::npos);
    EXPECT_EQ(cache->stats().jit_compiles, 0u);
    // A plain miss is not an error, even in strict mode.
    auto found = Cache::open([&] {
        auto c = remote_config(config("strict2"), server->url());
        c.remote_required = true;
        return c;
    }());
    EXPECT_EQ(found->program(context_, device_, scale_request(50)).outcome().rung, Rung::jit);
}

TEST_F(RemoteLadder, EightProcessesShareOneServer) {
    if (child_role() == "node") {
        run_node(context_, device_);
        return;
    }
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    auto warmer = nodes(
        1, {{"DIR", (dir() / "warmer").string()}, {"URL", server->url()}, {"SALTS", "60,61"}});
    ASSERT_EQ(warmer[0].size(), 3u);
    EXPECT_EQ(warmer[0][2], "uploads 2");
    // Eight nodes with empty stores at once: every kernel a remote hit, no compile.
    auto eight = nodes(8, {{"DIR", (dir() / "node").string()},
                           {"PER_CHILD", "1"},
                           {"URL", server->url()},
                           {"SALTS", "60,61"}});
    ASSERT_EQ(eight.size(), 8u);
    for (const auto& lines : eight) {
        ASSERT_EQ(lines.size(), 3u);
        EXPECT_EQ(rung_word(lines[0]), "remote") << lines[0];
        EXPECT_EQ(rung_word(lines[1]), "remote") << lines[1];
    }
    EXPECT_EQ(server->count("GET"), 2u + 16u);  // the warmer's misses, then 8 x 2 hits
    EXPECT_EQ(server->count("PUT"), 2u);
}

}  // namespace
}  // namespace kcache::test
