// The layer's cache opening (label layer): it starts on a thread of the
// layer's own when the application looks for platforms or creates a
// context, so that the first
// build does not wait for it; an application that never builds, exits from
// another thread or forks meanwhile loses nothing and hangs nowhere.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "layer_fixture.hpp"

namespace kcache::test {
namespace {

using LayerOpening = LayerTest;

std::size_t count_of(const std::vector<std::string>& lines, const std::string& prefix) {
    return static_cast<std::size_t>(std::count_if(
        lines.begin(), lines.end(), [&](const auto& l) { return l.rfind(prefix, 0) == 0; }));
}

// The opening starts before any build: a configuration that does not load
// is reported by an application that creates a context and builds nothing
// (the opening used to wait for the first build, inside its time).
TEST_F(LayerOpening, StartsBeforeTheFirstBuildNotInIt) {
    const std::vector<std::string> env = {"KCACHE_JIT_TIMEOUT_MS=abc"};
    const auto layered = run(With::layer, KCACHE_TEST_PROBE_PATH, {"context"}, env);
    EXPECT_EQ(layered.exit_code, 0) << layered.err;
    const auto lines = trace_lines(layered.err);
    ASSERT_EQ(lines.size(), 1u) << layered.err;
    EXPECT_EQ(lines[0].rfind("configuration: KCACHE_JIT_TIMEOUT_MS", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find("straight to the driver"), std::string::npos) << lines[0];
}

// With a store there, the opening opens it; the application builds nothing,
// exits, and the store and its counters are as they were.
TEST_F(LayerOpening, AnApplicationThatNeverBuildsLeavesTheStoreAsItWas) {
    const auto first = run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const std::string counted = counters();
    const auto listed = run(With::driver, KCACHE_TEST_CLI_PATH, {"ls"});
    const auto idle = run(With::layer, KCACHE_TEST_PROBE_PATH, {"context"});
    EXPECT_EQ(idle.exit_code, 0) << idle.err;
    EXPECT_TRUE(trace_lines(idle.err).empty()) << idle.err;
    EXPECT_EQ(counters(), counted);
    EXPECT_EQ(run(With::driver, KCACHE_TEST_CLI_PATH, {"ls"}).out, listed.out);
    const auto second = run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"});
    EXPECT_EQ(count_of(trace_lines(second.err), "HIT "), 4u) << second.err;
}

// The opening thread registers no exit handler (exit would run it before
// the handler that waits for that thread): none with a local store, none
// with a remote tier (whose libcurl and OpenSSL register theirs at set-up:
// such a cache is opened by the first build instead).
TEST_F(LayerOpening, TheOpeningThreadRegistersNoExitHandler) {
    ASSERT_EQ(run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"}).exit_code, 0);
    const std::string preload = "LD_PRELOAD=" KCACHE_TEST_EXIT_PROBE_PATH;
    for (const std::string remote : {"", "https://127.0.0.1:9/kcache"}) {
        const auto idle = run(With::layer, KCACHE_TEST_PROBE_PATH, {"context"},
                              {preload, "KCACHE_REMOTE=" + remote});
        EXPECT_EQ(idle.exit_code, 0) << idle.err;
        EXPECT_EQ(idle.err.find("exit handler registered on a thread"), std::string::npos)
            << "remote '" << remote << "': " << idle.err;
    }
}

// exit() from another thread right after the context's creation, while the
// cache may be opening: the exit waits for the opening and the process ends
// cleanly, every time.
TEST_F(LayerOpening, ExitFromAnotherThreadWhileOpeningEndsTheProcessCleanly) {
    ASSERT_EQ(run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"}).exit_code, 0);
    for (int i = 0; i < 5; ++i) {
        const auto ended = run(With::layer, KCACHE_TEST_PROBE_PATH, {"exit"});
        EXPECT_EQ(ended.exit_code, 0) << ended.err;
        EXPECT_TRUE(trace_lines(ended.err).empty()) << ended.err;
    }
    const auto after = run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"});
    EXPECT_EQ(count_of(trace_lines(after.err), "HIT "), 4u) << after.err;
}

// fork() right after the context's creation: the child, whose exit handlers
// run, exits (fork waited for the opening, so the child has no half-made
// cache nor a thread it lacks to join), and the parent's build is a store
// hit with the right result.
TEST_F(LayerOpening, AChildForkedWhileOpeningExitsAndTheParentHits) {
    ASSERT_EQ(run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"}).exit_code, 0);
    for (int i = 0; i < 3; ++i) {
        const auto forked = run(With::layer, KCACHE_TEST_PROBE_PATH, {"fork"});
        EXPECT_EQ(value_of(forked.out, "fork.child"), "exited") << forked.out << forked.err;
        EXPECT_EQ(value_of(forked.out, "fork.build"), "0") << forked.out;
        EXPECT_EQ(value_of(forked.out, "fork.run"), "45") << forked.out;
        EXPECT_EQ(count_of(trace_lines(forked.err), "HIT "), 1u) << forked.err;
    }
}

}  // namespace
}  // namespace kcache::test
