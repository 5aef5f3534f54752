// Slow.* (PoCL, slow): the watchdog against a compile that takes minutes.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "jit_support.hpp"
#include "process_probe.hpp"
#include "temp_dir.hpp"

namespace kcache::compiler {
namespace {

using namespace std::chrono_literals;

// 2^17 statements: PoCL 3.1 needs well over 30 s (over 2 min measured).
constexpr int kSlowLevels = 17;

JitRequest slow_request() {
    JitRequest q;
    q.device = test::pocl_device();
    q.source = test::nested_macro_kernel(kSlowLevels);
    q.entry_points = {"slow"};
    return q;
}

class Slow : public test::TempDirTest {};

TEST_F(Slow, HungCompileTimesOutAndLeavesNoHelper) {
    auto config = JitConfig{test::jit_helper_path(), {"POCL_CACHE_DIR=" + dir().string()}, {}};
    pid_t helper = -1;
    config.on_start = [&](pid_t p) { helper = p; };
    const auto start = Clock::now();
    auto r = JitCompiler(config).compile(slow_request(), start + 2s);
    const auto wall = Clock::now() - start;
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, CompileErrorKind::timeout) << r.error().message;
    EXPECT_LT(wall, 2500ms);
    ASSERT_GT(helper, 0);
    EXPECT_TRUE(test::process_gone(helper));
    EXPECT_TRUE(test::live_group_members(helper).empty());
}

TEST_F(Slow, HelperDiesWhenItsParentIsKilled) {
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    const pid_t parent = ::fork();
    ASSERT_GE(parent, 0);
    if (parent == 0) {
        // The doomed parent: report the helper's pid, then compile forever.
        auto config = JitConfig{test::jit_helper_path(), {"POCL_CACHE_DIR=" + dir().string()}, {}};
        config.on_start = [&](pid_t p) { (void)!::write(fds[1], &p, sizeof p); };
        (void)JitCompiler(config).compile(slow_request(), Clock::now() + 120s);
        ::_exit(0);
    }
    ::close(fds[1]);
    pid_t helper = -1;
    ASSERT_EQ(::read(fds[0], &helper, sizeof helper), static_cast<ssize_t>(sizeof helper));
    ::close(fds[0]);
    std::this_thread::sleep_for(300ms);  // the helper is inside clBuildProgram now
    ASSERT_FALSE(test::process_gone(helper));
    ::kill(parent, SIGKILL);
    ASSERT_EQ(::waitpid(parent, nullptr, 0), parent);
    EXPECT_TRUE(test::wait_gone(helper, 2s)) << "helper " << helper << " outlived its parent";
    EXPECT_TRUE(test::live_group_members(helper).empty());
}

// A legal kernel whose build recurses deeply: a sum of 6000 terms.
JitRequest deep_expression_request(std::uint64_t stack_bytes) {
    std::string sum = "x";
    for (int i = 0; i < 6000; ++i) {
        sum += " + x";
    }
    JitRequest q;
    q.device = test::pocl_device();
    q.source = "__kernel void deep(__global float* a) { float x = a[0]; a[1] = " + sum + "; }";
    q.entry_points = {"deep"};
    q.build_stack_bytes = stack_bytes;
    return q;
}

TEST_F(Slow, DeepExpressionCrashesASmallStackAndBuildsOnTheLargeOne) {
    auto small = test::pocl_jit((dir() / "a").string())
                     .compile(deep_expression_request(1u << 20), Clock::now() + 60s);
    ASSERT_FALSE(small.ok());
    EXPECT_EQ(small.error().kind, CompileErrorKind::crash) << small.error().message;
    EXPECT_EQ(small.error().signal, SIGSEGV);
    auto large = test::pocl_jit((dir() / "b").string())
                     .compile(deep_expression_request(kDefaultBuildStack), Clock::now() + 60s);
    EXPECT_TRUE(large.ok()) << large.error().message;
}

}  // namespace
}  // namespace kcache::compiler
