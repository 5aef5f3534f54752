// Pocl.* (PoCL): persistent kcache-jit helpers behind JitCompiler: reuse,
// deadlines, crashes, idle exit, dying with the parent process, concurrency
// and reaping. Helpers are observed through what they report (their pid and
// how many compiles they served) and through /proc, never through timing.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "child_process.hpp"
#include "jit_support.hpp"
#include "process_probe.hpp"
#include "temp_dir.hpp"

namespace kcache::compiler {
namespace {

using namespace std::chrono_literals;

class PoolTest : public test::TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        test::use_private_pocl_cache();
    }
    JitConfig pooled(std::size_t size, std::chrono::milliseconds idle = 60s) const {
        JitConfig c{test::jit_helper_path(), {"POCL_CACHE_DIR=" + (dir() / "pocl").string()}, {}};
        c.pool_size = size;
        c.idle_timeout = idle;
        return c;
    }
    static JitRequest axpb(int salt) {
        JitRequest q;
        q.device = test::pocl_device();
        q.source = test::axpb_source(salt);
        q.entry_points = {"axpb"};
        return q;
    }
    static JitRequest slow() {
        JitRequest q;
        q.device = test::pocl_device();
        q.source = test::nested_macro_kernel(17);  // minutes on PoCL
        q.entry_points = {"slow"};
        return q;
    }
};

using Pocl = PoolTest;

TEST_F(Pocl, PooledHelperServesLaterCompiles) {
    JitCompiler jit(pooled(1));
    std::vector<pid_t> pids;
    for (int salt = 1; salt <= 3; ++salt) {
        auto r = jit.compile(axpb(salt), Clock::now() + 60s);
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

TEST_F(Pocl, PoolOffStartsAFreshHelperPerCompile) {
    JitCompiler jit(pooled(0));
    auto a = jit.compile(axpb(1), Clock::now() + 60s);
    auto b = jit.compile(axpb(2), Clock::now() + 60s);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NE(a->helper_pid, b->helper_pid);
    EXPECT_EQ(a->served, 1u);
    EXPECT_EQ(b->served, 1u);
    EXPECT_TRUE(jit.helper_pids().empty());
}

TEST_F(Pocl, DeadlineKillsThePooledHelperAndTheNextCompileSucceeds) {
    JitCompiler jit(pooled(1));
    auto first = jit.compile(axpb(1), Clock::now() + 60s);
    ASSERT_TRUE(first.ok()) << first.error().message;
    const pid_t hung = first->helper_pid;
    const auto deadline = Clock::now() + 1s;
    auto r = jit.compile(slow(), deadline);
    const auto overshoot = Clock::now() - deadline;
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::timeout) << r.error().message;
    EXPECT_LT(overshoot, 500ms);  // a generous bound: the answer comes at the kill
    EXPECT_TRUE(test::wait_reaped(hung, 5s)) << "killed helper not reaped";
    auto next = jit.compile(axpb(2), Clock::now() + 60s);
    ASSERT_TRUE(next.ok()) << next.error().message;
    EXPECT_NE(next->helper_pid, hung);
    EXPECT_EQ(next->served, 1u);
}

// A pooled helper keeps its build thread between compiles and makes a new
// one when a request asks for another stack: a build that overflows 1 MiB
// succeeds on the default stack right after a 1 MiB request, in the same
// helper.
TEST_F(Pocl, PooledHelperMakesABuildThreadPerStackSize) {
    JitCompiler jit(pooled(1));
    auto small = axpb(1);
    small.build_stack_bytes = 1u << 20;
    auto first = jit.compile(small, Clock::now() + 60s);
    ASSERT_TRUE(first.ok()) << first.error().message;
    auto deep = jit.compile(test::deep_expression_request(kDefaultBuildStack), Clock::now() + 120s);
    ASSERT_TRUE(deep.ok()) << deep.error().message;
    EXPECT_EQ(deep->helper_pid, first->helper_pid);
    EXPECT_EQ(deep->served, 2u);
    auto again = jit.compile(axpb(2), Clock::now() + 60s);  // the same stack: the same thread
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->helper_pid, first->helper_pid);
    EXPECT_EQ(test::run_axpb_binary(again->binary, 256, 64, nullptr), 7.0f);
}

// A request with warm_after_reply is answered before its warm-up: the
// answer's binary is not warmed, then the hook gets the warmed one from the
// same helper, which goes on to serve the next compile.
TEST_F(Pocl, WarmupAfterTheAnswerReachesTheHookAndKeepsTheHelper) {
    JitCompiler jit(pooled(1));
    auto q = axpb(21);
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
    auto next = jit.compile(axpb(22), Clock::now() + 60s);
    ASSERT_TRUE(next.ok()) << next.error().message;
    EXPECT_EQ(next->helper_pid, r->helper_pid);
    EXPECT_EQ(next->served, 2u);
}

// A fresh helper per compile answers once: it warms up before answering.
TEST_F(Pocl, WithThePoolOffTheWarmupComesBeforeTheAnswer) {
    JitCompiler jit(pooled(0));
    auto q = axpb(23);
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

TEST_F(Pocl, DrainWaitsForTheWarmupAfterTheAnswer) {
    JitCompiler jit(pooled(1));
    auto q = axpb(24);
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
TEST_F(Pocl, AWarmupThatHangsAfterTheAnswerIsKilledAtTheDeadline) {
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
    auto next = jit.compile(axpb(25), Clock::now() + 60s);
    ASSERT_TRUE(next.ok()) << next.error().message;
    EXPECT_NE(next->helper_pid, r->helper_pid);
}

TEST_F(Pocl, CrashKillsOnlyItsHelper) {
    JitCompiler jit(pooled(2));
    // Two compiles at once: two helpers.
    std::vector<Result<JitResult, JitError>> warm(2, fail(JitError{}));
    {
        std::jthread t([&] { warm[1] = jit.compile(axpb(2), Clock::now() + 60s); });
        warm[0] = jit.compile(axpb(1), Clock::now() + 60s);
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
    auto next = jit.compile(axpb(3), Clock::now() + 60s);
    ASSERT_TRUE(next.ok()) << next.error().message;
    EXPECT_EQ(next->helper_pid, after[0]);
    EXPECT_EQ(next->served, 2u);
}

TEST_F(Pocl, IdleHelperExits) {
    JitCompiler jit(pooled(1, 300ms));
    auto r = jit.compile(axpb(1), Clock::now() + 60s);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(test::wait_reaped(r->helper_pid, 10s)) << "idle helper still there";
    EXPECT_TRUE(jit.helper_pids().empty());
    auto again = jit.compile(axpb(2), Clock::now() + 60s);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_NE(again->helper_pid, r->helper_pid);
    EXPECT_EQ(again->served, 1u);
}

TEST_F(Pocl, ShutdownKillsBusyAndIdleHelpers) {
    JitCompiler jit(pooled(2));
    Result<JitResult, JitError> busy = fail(JitError{});
    std::jthread t([&] { busy = jit.compile(slow(), Clock::now() + 120s); });
    while (jit.helper_pids().empty()) {
        std::this_thread::sleep_for(10ms);
    }
    auto idle = jit.compile(axpb(1), Clock::now() + 60s);  // the other helper
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
    auto later = jit.compile(axpb(2), Clock::now() + 10s);
    ASSERT_FALSE(later.ok());
    EXPECT_EQ(later.error().kind, JitErrc::spawn_failed);
}

TEST_F(Pocl, ConcurrentCompilesShareABoundedPool) {
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
                auto r = jit.compile(axpb(100 + i), Clock::now() + 120s);
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

TEST_F(Pocl, NoZombiesAfterTimeoutsAndCrashes) {
    JitCompiler pooled_jit(pooled(1));
    JitCompiler one_shot(pooled(0));
    std::vector<pid_t> helpers;
    auto config = pooled(0);
    config.on_start = [&](pid_t p) { helpers.push_back(p); };
    JitCompiler tracked(config);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(tracked.compile(slow(), Clock::now() + 300ms).error().kind, JitErrc::timeout);
        EXPECT_EQ(pooled_jit.compile(slow(), Clock::now() + 300ms).error().kind, JitErrc::timeout);
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
    JitConfig config{test::jit_helper_path(), {"POCL_CACHE_DIR=" + (dir / "pocl").string()}, {}};
    config.pool_size = 2;
    std::mutex mu;
    std::vector<pid_t> started;
    config.on_start = [&](pid_t p) {
        std::lock_guard g(mu);
        started.push_back(p);
    };
    JitCompiler jit(config);
    std::jthread busy([&] {
        JitRequest q;
        q.device = test::pocl_device();
        q.source = test::nested_macro_kernel(17);
        (void)jit.compile(q, Clock::now() + 300s);
    });
    while (jit.helper_pids().empty()) {
        std::this_thread::sleep_for(10ms);
    }
    JitRequest q;
    q.device = test::pocl_device();
    q.source = test::axpb_source(1);
    if (!jit.compile(q, Clock::now() + 60s).ok()) {
        std::_Exit(3);
    }
    {
        std::lock_guard g(mu);
        std::ofstream(dir / "pids.tmp") << started.at(0) << " " << started.at(1) << "\n";
    }
    std::filesystem::rename(dir / "pids.tmp", dir / "pids");
    std::this_thread::sleep_for(300s);
}

TEST_F(Pocl, HelpersDieWithTheirParentProcess) {
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
