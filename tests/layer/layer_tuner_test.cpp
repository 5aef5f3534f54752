// A CLBlast tuner under the layer (labels layer, slow: 14 PoCL compiles the
// first time): it prints its results, and its second run compiles nothing.

#include <gtest/gtest.h>

#include <algorithm>

#include "layer_fixture.hpp"

namespace kcache::test {
namespace {

using LayerTuner = LayerTest;

TEST_F(LayerTuner, AClblastTunerRunsAndItsSecondRunCompilesNothing) {
    const std::vector<std::string> args = {"-runs", "1", "-n", "4096"};
    const auto first = run(With::layer, "/usr/bin/clblast_tuner_xdot", args);
    const auto second = run(With::layer, "/usr/bin/clblast_tuner_xdot", args);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_NE(second.out.find("Found best result"), std::string::npos) << second.out;
    const auto built = trace_lines(first.err);
    const auto again = trace_lines(second.err);
    ASSERT_FALSE(built.empty()) << first.err;
    EXPECT_EQ(again.size(), built.size()) << second.err;
    EXPECT_TRUE(std::all_of(again.begin(), again.end(), [](const std::string& l) {
        return l.rfind("HIT ", 0) == 0;
    })) << second.err;
    EXPECT_NE(counters().find("jit " + std::to_string(built.size()) + "\n"), std::string::npos)
        << counters();
}

}  // namespace
}  // namespace kcache::test
