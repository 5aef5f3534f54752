// Compiler.*: a helper that crashes or lies, and bad requests to the real
// kcache-jit (which answers them before touching OpenCL).

#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "jit_support.hpp"
#include "process_probe.hpp"

namespace kcache::compiler {
namespace {

using namespace std::chrono_literals;

JitCompiler crashing_helper() {
    return JitCompiler(JitConfig{KCACHE_TEST_CRASHING_HELPER_PATH, {}, {}});
}

JitRequest with_options(const std::string& options) {
    JitRequest q;
    q.source = "kernel void k() {}";
    q.options = options;
    return q;
}

TEST(Compiler, CrashingHelperIsReportedWithItsSignal) {
    auto r = crashing_helper().compile(with_options("crash:11"), Clock::now() + 10s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::crash);
    EXPECT_EQ(r.error().signal, SIGSEGV);
    EXPECT_NE(r.error().log.find("raising 11"), std::string::npos) << r.error().log;
    // The parent is unharmed and can go on compiling.
    auto again = crashing_helper().compile(with_options("crash:6"), Clock::now() + 10s);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().signal, SIGABRT);
}

TEST(Compiler, GarbageReplyIsAProtocolError) {
    auto r = crashing_helper().compile(with_options("garbage-reply"), Clock::now() + 10s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::protocol);
    EXPECT_NE(r.error().message.find("magic"), std::string::npos) << r.error().message;
}

TEST(Compiler, SilentHelperTimesOut) {
    const auto start = Clock::now();
    auto r = crashing_helper().compile(with_options("hang"), start + 300ms);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::timeout);
    EXPECT_LT(Clock::now() - start, 1500ms);
}

TEST(Compiler, MissingHelperIsSpawnFailed) {
    auto r = JitCompiler(JitConfig{"/nonexistent/kcache-jit", {}, {}})
                 .compile(with_options(""), Clock::now() + 10s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::spawn_failed);
}

// Feeds raw bytes to the real kcache-jit and interprets its answer.
Result<JitResult, JitError> feed_helper(const std::string& bytes) {
    SpawnSpec spec;
    spec.program = test::jit_helper_path();
    spec.stdin_data = bytes;
    return interpret_helper_run(run(spec, Clock::now() + 20s));
}

TEST(Compiler, HelperRejectsGarbageOnStdin) {
    auto r = feed_helper(std::string(100, 'G'));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::protocol);
    EXPECT_NE(r.error().message.find("magic"), std::string::npos) << r.error().message;
}

TEST(Compiler, HelperRejectsTruncatedFrames) {
    const std::string frame = encode_request(with_options("-O2"));
    for (std::size_t cut :
         {std::size_t(0), std::size_t(7), kFrameHeaderSize, frame.size() / 2, frame.size() - 1}) {
        auto r = feed_helper(frame.substr(0, cut));
        ASSERT_FALSE(r.ok()) << "cut at " << cut;
        EXPECT_EQ(r.error().kind, JitErrc::protocol) << "cut at " << cut;
        EXPECT_NE(r.error().message.find("truncated"), std::string::npos) << r.error().message;
    }
}

TEST(Compiler, HelperRejectsBadFieldValues) {
    JitRequest q = with_options("");
    q.warmup = WarmupLaunch{1, {100, 1, 1}, {64, 1, 1}, 16};  // 100 is no multiple of 64
    auto r = feed_helper(encode_request(q));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::protocol);
    EXPECT_NE(r.error().message.find("global size"), std::string::npos) << r.error().message;
}

// ocloc runs behind `kcache-jit --exec-guard`; here `sleep` stands in for it.
TEST(Compiler, ExecGuardedProgramDiesWithItsParent) {
    const auto forked = test::fork_parent([](const StartHook& report) {
        SpawnSpec spec;
        spec.program = test::jit_helper_path();
        spec.args = {"--exec-guard", "--", "/bin/sleep", "60"};
        (void)run(spec, Clock::now() + 60s, report);
    });
    ASSERT_GT(forked.started, 0);
    std::this_thread::sleep_for(100ms);  // past the exec
    ASSERT_FALSE(test::process_gone(forked.started));
    ASSERT_TRUE(test::kill_parent(forked.parent));
    EXPECT_TRUE(test::wait_gone(forked.started, 2s)) << "guarded program outlived its parent";
}

TEST(Compiler, ExecGuardReportsAProgramThatCannotRun) {
    SpawnSpec spec;
    spec.program = test::jit_helper_path();
    spec.args = {"--exec-guard", "--", "/nonexistent/program"};
    const auto r = run(spec, Clock::now() + 10s);
    EXPECT_EQ(r.outcome, ChildExit::exited);
    EXPECT_EQ(r.exit_code, 127);
    EXPECT_NE(r.err.find("cannot exec"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kcache::compiler
