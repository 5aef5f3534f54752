// CompilerWatchdog.* (PoCL, slow): the watchdog against a compile that takes minutes.

#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "jit_support.hpp"
#include "process_probe.hpp"
#include "temp_dir.hpp"

namespace kcache::compiler {
namespace {

using namespace std::chrono_literals;

class CompilerWatchdog : public test::TempDirTest {};

TEST_F(CompilerWatchdog, HungCompileTimesOutAndLeavesNoHelper) {
    auto config = JitConfig{test::jit_helper_path(), {"POCL_CACHE_DIR=" + dir().string()}, {}};
    pid_t helper = -1;
    config.on_start = [&](pid_t p) { helper = p; };
    const auto start = Clock::now();
    auto r = JitCompiler(config).compile(test::slow_request(), start + 2s);
    const auto wall = Clock::now() - start;
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::timeout) << r.error().message;
    EXPECT_LT(wall, 2500ms);
    ASSERT_GT(helper, 0);
    // The answer comes at the kill; the reaper thread reaps the helper after.
    EXPECT_TRUE(test::wait_reaped(helper, 5s)) << "helper not reaped";
    EXPECT_TRUE(test::live_group_members(helper).empty());
}

TEST_F(CompilerWatchdog, HelperDiesWhenItsParentIsKilled) {
    // The doomed parent reports the helper's pid, then compiles for minutes.
    const auto forked = test::fork_parent([&](const StartHook& report) {
        auto config = JitConfig{test::jit_helper_path(), {"POCL_CACHE_DIR=" + dir().string()}, {}};
        config.on_start = report;
        (void)JitCompiler(config).compile(test::slow_request(), Clock::now() + 120s);
    });
    ASSERT_GT(forked.started, 0);
    std::this_thread::sleep_for(300ms);  // the helper is inside clBuildProgram now
    ASSERT_FALSE(test::process_gone(forked.started));
    ASSERT_TRUE(test::kill_parent(forked.parent));
    EXPECT_TRUE(test::wait_gone(forked.started, 2s)) << "helper outlived its parent";
    EXPECT_TRUE(test::live_group_members(forked.started).empty());
}

TEST_F(CompilerWatchdog, DeepExpressionCrashesASmallStackAndBuildsOnTheLargeOne) {
    auto small = test::pocl_jit((dir() / "a").string())
                     .compile(test::deep_expression_request(1u << 20), Clock::now() + 60s);
    ASSERT_FALSE(small.ok());
    EXPECT_EQ(small.error().kind, JitErrc::crash) << small.error().message;
    EXPECT_EQ(small.error().signal, SIGSEGV);
    auto large =
        test::pocl_jit((dir() / "b").string())
            .compile(test::deep_expression_request(kDefaultBuildStack), Clock::now() + 60s);
    EXPECT_TRUE(large.ok()) << large.error().message;
}

}  // namespace
}  // namespace kcache::compiler
