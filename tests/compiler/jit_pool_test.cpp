// CompilerJitPool.* (PoCL): persistent kcache-jit helpers behind JitCompiler: reuse,
// deadlines, warm-ups after the answer and concurrency (their lifetimes:
// jit_pool_lifetime_test.cpp). Helpers are observed through what they report
// (their pid and how many compiles they served) and through /proc, never
// through timing.

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "jit_pool_fixture.hpp"
#include "process_probe.hpp"

namespace kcache::compiler {
namespace {

using namespace std::chrono_literals;

TEST_F(CompilerJitPool, PooledHelperServesLaterCompiles) {
    JitCompiler jit(pooled(1));
    std::vector<pid_t> pids;
    for (int salt = 1; salt <= 3; ++salt) {
        auto r = jit.compile(test::axpb_request(salt), Clock::now() + 60s);
        ASSERT_TRUE(r.ok()) << r.error().message << "\n" << r.error().log;
        EXPECT_EQ(r->served, static_cast<std::uint64_t>(salt));
        pids.push_back(r->helper_pid);
        // c = 1 * 2 + 3 + salt
        EXPECT_EQ(test::run_axpb_binary(r->binary, 256, 64, nullptr), 5.0f + salt);
    }
    EXPECT_EQ(pids[0], pids[1]);
    EXPECT_EQ(pids[0], pids[2]);
    EXPECT_EQ(jit.helper_pids(), std::vector<pid_t>{pids[0]});
}

TEST_F(CompilerJitPool, PoolOffStartsAFreshHelperPerCompile) {
    JitCompiler jit(pooled(0));
    auto a = jit.compile(test::axpb_request(1), Clock::now() + 60s);
    auto b = jit.compile(test::axpb_request(2), Clock::now() + 60s);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NE(a->helper_pid, b->helper_pid);
    EXPECT_EQ(a->served, 1u);
    EXPECT_EQ(b->served, 1u);
    EXPECT_TRUE(jit.helper_pids().empty());
}

TEST_F(CompilerJitPool, DeadlineKillsThePooledHelperAndTheNextCompileSucceeds) {
    JitCompiler jit(pooled(1));
    auto first = jit.compile(test::axpb_request(1), Clock::now() + 60s);
    ASSERT_TRUE(first.ok()) << first.error().message;
    const pid_t hung = first->helper_pid;
    const auto deadline = Clock::now() + 1s;
    auto r = jit.compile(test::slow_request(), deadline);
    const auto overshoot = Clock::now() - deadline;
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::timeout) << r.error().message;
    EXPECT_LT(overshoot, 500ms);  // a generous bound: the answer comes at the kill
    EXPECT_TRUE(test::wait_reaped(hung, 5s)) << "killed helper not reaped";
    auto next = jit.compile(test::axpb_request(2), Clock::now() + 60s);
    ASSERT_TRUE(next.ok()) << next.error().message;
    EXPECT_NE(next->helper_pid, hung);
    EXPECT_EQ(next->served, 1u);
}

// A pooled helper keeps its build thread between compiles and makes a new
// one when a request asks for another stack: a build that overflows 1 MiB
// succeeds on the default stack right after a 1 MiB request, in the same
// helper.
TEST_F(CompilerJitPool, PooledHelperMakesABuildThreadPerStackSize) {
    JitCompiler jit(pooled(1));
    auto small = test::axpb_request(1);
    small.build_stack_bytes = 1u << 20;
    auto first = jit.compile(small, Clock::now() + 60s);
    ASSERT_TRUE(first.ok()) << first.error().message;
    auto deep = jit.compile(test::deep_expression_request(kDefaultBuildStack), Clock::now() + 120s);
    ASSERT_TRUE(deep.ok()) << deep.error().message;
    EXPECT_EQ(deep->helper_pid, first->helper_pid);
    EXPECT_EQ(deep->served, 2u);
    auto again =
        jit.compile(test::axpb_request(2), Clock::now() + 60s);  // the same stack: the same thread
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->helper_pid, first->helper_pid);
    EXPECT_EQ(test::run_axpb_binary(again->binary, 256, 64, nullptr), 7.0f);
}

// A request with warm_after_reply is answered before its warm-up: the
// answer's binary is not warmed, then the hook gets the warmed one from the
// same helper, which goes on to serve the next compile.
TEST_F(CompilerJitPool, WarmupAfterTheAnswerReachesTheHookAndKeepsTheHelper) {
    JitCompiler jit(pooled(1));
    auto q = test::axpb_request(21);
    q.warmup = WarmupLaunch{1, {256, 1, 1}, {64, 1, 1}, 4096};
    q.warm_after_reply = true;
    std::promise<Result<JitResult, JitError>> warmed;
    auto got = warmed.get_future();
    auto r = jit.compile(q, Clock::now() + 60s, [&](Result<JitResult, JitError> second) {
        warmed.set_value(std::move(second));
    });
    ASSERT_TRUE(r.ok()) << r.error().message << "\n" << r.error().log;
    EXPECT_FALSE(r->warmed);
    EXPECT_TRUE(r->warm_pending);
    EXPECT_EQ(r->timings.helper.warmup_us, 0u);
    EXPECT_EQ(test::run_axpb_binary(r->binary, 256, 64, nullptr), 26.0f);
    ASSERT_EQ(got.wait_for(60s), std::future_status::ready) << "the hook was never told";
    const auto second = got.get();
    ASSERT_TRUE(second.ok()) << second.error().message;
    const JitResult& w = *second;
    EXPECT_TRUE(w.warmed) << w.warmup_note;
    EXPECT_FALSE(w.warm_pending);
    EXPECT_EQ(w.helper_pid, r->helper_pid);
    EXPECT_GT(w.timings.helper.warmup_us, 0u);
    // PoCL keeps the work-group function the launch generated in the binary.
    EXPECT_GT(w.binary.size(), r->binary.size());
    EXPECT_EQ(test::run_axpb_binary(w.binary, 256, 64, nullptr), 26.0f);
    auto next = jit.compile(test::axpb_request(22), Clock::now() + 60s);
    ASSERT_TRUE(next.ok()) << next.error().message;
    EXPECT_EQ(next->helper_pid, r->helper_pid);
    EXPECT_EQ(next->served, 2u);
}

// A fresh helper per compile answers once: it warms up before answering.
TEST_F(CompilerJitPool, WithThePoolOffTheWarmupComesBeforeTheAnswer) {
    JitCompiler jit(pooled(0));
    auto q = test::axpb_request(23);
    q.warmup = WarmupLaunch{1, {256, 1, 1}, {64, 1, 1}, 4096};
    q.warm_after_reply = true;
    bool told = false;
    auto r = jit.compile(q, Clock::now() + 60s, [&](auto) { told = true; });
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->warmed) << r->warmup_note;
    EXPECT_FALSE(r->warm_pending);
    jit.drain();
    EXPECT_FALSE(told);
}

TEST_F(CompilerJitPool, DrainWaitsForTheWarmupAfterTheAnswer) {
    JitCompiler jit(pooled(1));
    auto q = test::axpb_request(24);
    q.warmup = WarmupLaunch{1, {256, 1, 1}, {64, 1, 1}, 4096};
    q.warm_after_reply = true;
    std::atomic<bool> told{false};
    auto r = jit.compile(q, Clock::now() + 60s, [&](auto) { told = true; });
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_TRUE(r->warm_pending);
    jit.drain();
    EXPECT_TRUE(told);
}

// A warm-up launch that never ends (the kernel spins on a zeroed buffer)
// after the answer: the helper is killed at the compile's deadline, the hook
// is told so, and the next compile gets a fresh helper.
TEST_F(CompilerJitPool, AWarmupThatHangsAfterTheAnswerIsKilledAtTheDeadline) {
    JitCompiler jit(pooled(1));
    JitRequest q;
    q.device = test::pocl_device();
    q.source =
        "__kernel void spin(volatile __global int* flag) {\n"
        "    while (flag[0] == 0) { }\n"
        "}\n";
    q.entry_points = {"spin"};
    q.warmup = WarmupLaunch{1, {1, 1, 1}, {1, 1, 1}, 64};
    q.warm_after_reply = true;
    std::optional<JitErrc> ended;
    const auto deadline = Clock::now() + 10s;
    auto r = jit.compile(q, deadline, [&](Result<JitResult, JitError> second) {
        ended = second ? std::nullopt : std::optional<JitErrc>(second.error().kind);
    });
    ASSERT_TRUE(r.ok()) << r.error().message << "\n" << r.error().log;
    ASSERT_TRUE(r->warm_pending);
    EXPECT_LT(Clock::now(), deadline) << "the answer waited for the warm-up";
    jit.drain();
    EXPECT_GE(Clock::now(), deadline);
    EXPECT_EQ(ended, JitErrc::timeout);
    EXPECT_TRUE(test::wait_reaped(r->helper_pid, 5s)) << "the hung helper was not killed";
    auto next = jit.compile(test::axpb_request(25), Clock::now() + 60s);
    ASSERT_TRUE(next.ok()) << next.error().message;
    EXPECT_NE(next->helper_pid, r->helper_pid);
}

TEST_F(CompilerJitPool, ConcurrentCompilesShareABoundedPool) {
    constexpr int kThreads = 6;
    constexpr std::size_t kPool = 2;
    std::mutex mu;
    std::set<pid_t> started;
    auto config = pooled(kPool);
    config.on_start = [&](pid_t p) {
        std::lock_guard g(mu);
        started.insert(p);
    };
    JitCompiler jit(config);
    std::vector<std::pair<pid_t, std::uint64_t>> served(kThreads);
    std::vector<std::string> errors(kThreads);
    {
        std::vector<std::jthread> threads;
        for (int i = 0; i < kThreads; ++i) {
            threads.emplace_back([&, i] {
                auto r = jit.compile(test::axpb_request(100 + i), Clock::now() + 120s);
                if (!r.ok()) {
                    errors[i] = r.error().message;
                    return;
                }
                served[i] = {r->helper_pid, r->served};
                std::string failed;
                const float got = test::run_axpb_binary(r->binary, 64, 64, nullptr, &failed);
                if (got != 105.0f + i) {
                    errors[i] = "request " + std::to_string(i) + " got " + std::to_string(got) +
                                " from helper " + std::to_string(r->helper_pid) + " " + failed;
                }
            });
        }
    }
    for (const auto& e : errors) {
        EXPECT_EQ(e, "");
    }
    EXPECT_LE(started.size(), kPool);
    // Every (helper, nth compile) pair is distinct: no request was answered twice.
    std::set<std::pair<pid_t, std::uint64_t>> distinct(served.begin(), served.end());
    EXPECT_EQ(distinct.size(), static_cast<std::size_t>(kThreads));
    for (const auto& [pid, n] : served) {
        EXPECT_TRUE(started.count(pid)) << pid;
    }
}

}  // namespace
}  // namespace kcache::compiler
