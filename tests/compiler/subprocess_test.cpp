// Compiler.*: the watchdog subprocess runner with ordinary programs.

#include "kcache/compiler/subprocess.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "kcache/compiler/child_process.hpp"
#include "process_probe.hpp"

namespace kcache::compiler {
namespace {

using namespace std::chrono_literals;

SpawnSpec shell(const std::string& script) {
    SpawnSpec s;
    s.program = "/bin/sh";
    s.args = {"-c", script};
    return s;
}

Clock::time_point in(std::chrono::milliseconds ms) {
    return Clock::now() + ms;
}

TEST(Compiler, RunnerCapturesExitCodeAndBothStreams) {
    const auto r = run(shell("echo out; echo err >&2; exit 3"), in(10s));
    EXPECT_EQ(r.outcome, ChildExit::exited);
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_EQ(r.out, "out\n");
    EXPECT_EQ(r.err, "err\n");
    EXPECT_GT(r.pid, 0);
}

TEST(Compiler, RunnerFeedsStdinLargerThanAPipe) {
    SpawnSpec s;
    s.program = "/bin/cat";
    s.stdin_data.assign(3u << 20, 'x');
    s.stdin_data += "end";
    const auto r = run(s, in(20s));
    EXPECT_EQ(r.outcome, ChildExit::exited);
    EXPECT_EQ(r.out, s.stdin_data);
}

TEST(Compiler, RunnerBoundsCapturedOutputButDrainsTheRest) {
    auto s = shell("head -c 5000000 /dev/zero; echo done >&2");
    s.stdout_limit = 1000;
    const auto r = run(s, in(20s));
    EXPECT_EQ(r.outcome, ChildExit::exited);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out.size(), 1000u);
    EXPECT_TRUE(r.out_truncated);
    EXPECT_EQ(r.err, "done\n");
}

TEST(Compiler, RunnerKillsTheWholeGroupAtTheDeadline) {
    pid_t pgid = -1;
    const auto start = Clock::now();
    // The background sleep is a grandchild in the same process group.
    const auto r = run(shell("sleep 30 & sleep 30"), in(300ms), [&](pid_t p) { pgid = p; });
    const auto wall = Clock::now() - start;
    EXPECT_EQ(r.outcome, ChildExit::timed_out);
    EXPECT_LT(wall, 1500ms);
    EXPECT_GE(wall, 300ms);
    ASSERT_GT(pgid, 0);
    EXPECT_TRUE(test::wait_gone(pgid, 1s));
    // The grandchild got the group SIGKILL too (it may linger as a zombie
    // until init reaps it, which live_group_members ignores).
    for (int i = 0; i < 100 && !test::live_group_members(pgid).empty(); ++i) {
        usleep(10000);
    }
    EXPECT_TRUE(test::live_group_members(pgid).empty());
}

TEST(Compiler, RunnerReportsAChildKilledBySignal) {
    const auto r = run(shell("kill -SEGV $$"), in(10s));
    EXPECT_EQ(r.outcome, ChildExit::signaled);
    EXPECT_EQ(r.signal, SIGSEGV);
}

TEST(Compiler, RunnerReportsSpawnFailure) {
    SpawnSpec s;
    s.program = "/nonexistent/kcache-no-such-program";
    const auto r = run(s, in(10s));
    EXPECT_EQ(r.outcome, ChildExit::spawn_failed);
    EXPECT_EQ(r.spawn_errno, ENOENT);
    EXPECT_EQ(r.pid, -1);
}

TEST(Compiler, RunnerChildLeadsItsOwnGroupAndKnowsItsParent) {
    pid_t child_pgid = -1;
    const auto r = run(shell("echo $KCACHE_PARENT_PID; cat > /dev/null"), in(10s),
                       [&](pid_t p) { child_pgid = ::getpgid(p); });
    ASSERT_EQ(r.outcome, ChildExit::exited);
    EXPECT_EQ(child_pgid, r.pid);
    EXPECT_NE(child_pgid, ::getpgrp());
    EXPECT_EQ(r.out, std::to_string(::getpid()) + "\n");
}

TEST(Compiler, RunnerLeaksNoDescriptorsAndNoZombies) {
    const int before = test::open_fd_count();
    // The child sees only 0, 1 and 2 (ls's own directory fd aside).
    const auto r = run(shell("ls /proc/$$/fd"), in(10s));
    ASSERT_EQ(r.outcome, ChildExit::exited);
    EXPECT_EQ(r.out, "0\n1\n2\n");
    (void)run(shell("sleep 5"), in(100ms));
    EXPECT_EQ(test::open_fd_count(), before);
    errno = 0;
    EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
}

TEST(Compiler, ChildProcessDestructorKillsAndReaps) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::setpgid(0, 0);
        ::pause();
        ::_exit(0);
    }
    ::setpgid(pid, pid);
    {
        ChildProcess child(pid);
        ChildProcess moved(std::move(child));
        EXPECT_FALSE(child.running());
        EXPECT_TRUE(moved.running());
        EXPECT_FALSE(moved.has_exited());
    }
    errno = 0;
    EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
}

}  // namespace
}  // namespace kcache::compiler
