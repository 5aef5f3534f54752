// CompilerJitPool.* (PoCL): the lifetimes of persistent kcache-jit helpers: a crash
// kills only its helper, idle helpers exit, shutdown kills busy and idle
// ones, nothing is left a zombie, and helpers die with their parent process.
// Helpers are observed through what they report and through /proc, never
// through timing.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "jit_pool_fixture.hpp"
#include "process_probe.hpp"

namespace kcache::compiler {
namespace {

using namespace std::chrono_literals;

TEST_F(CompilerJitPool, CrashKillsOnlyItsHelper) {
    JitCompiler jit(pooled(2));
    // Two compiles at once: two helpers.
    std::vector<Result<JitResult, JitError>> warm(2, fail(JitError{}));
    {
        std::jthread t([&] { warm[1] = jit.compile(test::axpb_request(2), Clock::now() + 60s); });
        warm[0] = jit.compile(test::axpb_request(1), Clock::now() + 60s);
    }
    ASSERT_TRUE(warm[0].ok() && warm[1].ok());
    auto before = jit.helper_pids();
    ASSERT_EQ(before.size(), 2u);
    // A real crash: the driver's compiler overflows a 1 MiB build stack.
    auto crash = jit.compile(test::deep_expression_request(1u << 20), Clock::now() + 60s);
    ASSERT_FALSE(crash.ok());
    EXPECT_EQ(crash.error().kind, JitErrc::crash) << crash.error().message;
    EXPECT_EQ(crash.error().signal, SIGSEGV);
    auto after = jit.helper_pids();
    ASSERT_EQ(after.size(), 1u);
    EXPECT_NE(std::find(before.begin(), before.end(), after[0]), before.end());
    const pid_t crashed = before[0] == after[0] ? before[1] : before[0];
    EXPECT_TRUE(test::wait_reaped(crashed, 5s));
    // The survivor serves the next compile; nothing of the crash lingers.
    auto next = jit.compile(test::axpb_request(3), Clock::now() + 60s);
    ASSERT_TRUE(next.ok()) << next.error().message;
    EXPECT_EQ(next->helper_pid, after[0]);
    EXPECT_EQ(next->served, 2u);
}

TEST_F(CompilerJitPool, IdleHelperExits) {
    JitCompiler jit(pooled(1, 300ms));
    auto r = jit.compile(test::axpb_request(1), Clock::now() + 60s);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(test::wait_reaped(r->helper_pid, 10s)) << "idle helper still there";
    EXPECT_TRUE(jit.helper_pids().empty());
    auto again = jit.compile(test::axpb_request(2), Clock::now() + 60s);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_NE(again->helper_pid, r->helper_pid);
    EXPECT_EQ(again->served, 1u);
}

TEST_F(CompilerJitPool, ShutdownKillsBusyAndIdleHelpers) {
    JitCompiler jit(pooled(2));
    Result<JitResult, JitError> busy = fail(JitError{});
    std::jthread t([&] { busy = jit.compile(test::slow_request(), Clock::now() + 120s); });
    while (jit.helper_pids().empty()) {
        std::this_thread::sleep_for(10ms);
    }
    auto idle = jit.compile(test::axpb_request(1), Clock::now() + 60s);  // the other helper
    ASSERT_TRUE(idle.ok());
    const auto pids = jit.helper_pids();
    ASSERT_EQ(pids.size(), 2u);
    jit.shutdown();
    t.join();
    ASSERT_FALSE(busy.ok());
    EXPECT_EQ(busy.error().kind, JitErrc::crash) << busy.error().message;
    for (pid_t p : pids) {
        EXPECT_TRUE(test::wait_reaped(p, 5s)) << p;
    }
    auto later = jit.compile(test::axpb_request(2), Clock::now() + 10s);
    ASSERT_FALSE(later.ok());
    EXPECT_EQ(later.error().kind, JitErrc::spawn_failed);
}

TEST_F(CompilerJitPool, NoZombiesAfterTimeoutsAndCrashes) {
    JitCompiler pooled_jit(pooled(1));
    JitCompiler one_shot(pooled(0));
    std::vector<pid_t> helpers;
    auto config = pooled(0);
    config.on_start = [&](pid_t p) { helpers.push_back(p); };
    JitCompiler tracked(config);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(tracked.compile(test::slow_request(), Clock::now() + 300ms).error().kind,
                  JitErrc::timeout);
        EXPECT_EQ(pooled_jit.compile(test::slow_request(), Clock::now() + 300ms).error().kind,
                  JitErrc::timeout);
        EXPECT_EQ(pooled_jit.compile(test::deep_expression_request(1u << 20), Clock::now() + 60s)
                      .error()
                      .kind,
                  JitErrc::crash);
    }
    for (pid_t p : helpers) {
        EXPECT_TRUE(test::wait_reaped(p, 5s)) << p;
    }
    for (int i = 0; i < 500 && !test::zombie_children().empty(); ++i) {
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_TRUE(test::zombie_children().empty());
}

// The child role: a process with one idle and one busy pooled helper that
// writes their pids to $DIR/pids and waits to be killed.
void run_doomed_parent(const std::filesystem::path& dir) {
    JitConfig config = pooled_config(dir, 2);
    std::mutex mu;
    std::vector<pid_t> started;
    config.on_start = [&](pid_t p) {
        std::lock_guard g(mu);
        started.push_back(p);
    };
    JitCompiler jit(config);
    std::jthread busy([&] { (void)jit.compile(test::slow_request(), Clock::now() + 300s); });
    while (jit.helper_pids().empty()) {
        std::this_thread::sleep_for(10ms);
    }
    if (!jit.compile(test::axpb_request(1), Clock::now() + 60s).ok()) {
        std::_Exit(3);
    }
    {
        std::lock_guard g(mu);
        std::ofstream(dir / "pids.tmp") << started.at(0) << " " << started.at(1) << "\n";
    }
    std::filesystem::rename(dir / "pids.tmp", dir / "pids");
    std::this_thread::sleep_for(300s);
}

TEST_F(CompilerJitPool, HelpersDieWithTheirParentProcess) {
    if (test::child_role() == "doomed") {
        run_doomed_parent(test::child_env("DIR"));
        return;
    }
    auto group = test::ChildGroup::spawn(1, "doomed", {{"DIR", dir().string()}});
    group.release();
    const auto pids_file = dir() / "pids";
    for (int i = 0; i < 6000 && !std::filesystem::exists(pids_file); ++i) {
        std::this_thread::sleep_for(10ms);
    }
    ASSERT_TRUE(std::filesystem::exists(pids_file)) << "the child never reported its helpers";
    pid_t busy = -1;
    pid_t idle = -1;
    std::ifstream(pids_file) >> busy >> idle;
    ASSERT_GT(busy, 0);
    ASSERT_GT(idle, 0);
    ASSERT_FALSE(test::process_gone(busy));
    ASSERT_FALSE(test::process_gone(idle));
    group.kill_all(SIGKILL);
    (void)group.wait_all(10s);
    EXPECT_TRUE(test::wait_gone(busy, 5s)) << "busy helper outlived its parent";
    EXPECT_TRUE(test::wait_gone(idle, 5s)) << "idle helper outlived its parent";
    EXPECT_TRUE(test::live_group_members(busy).empty());
    EXPECT_TRUE(test::live_group_members(idle).empty());
}

}  // namespace
}  // namespace kcache::compiler
