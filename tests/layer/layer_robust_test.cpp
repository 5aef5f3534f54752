// Never worse than the driver alone (label layer): the same busy
// application (tests/layer/layer_stress.cpp) run without kcache and under
// `kcache run`, with PoCL's own kernel cache off as the fixture keeps it.
// Whatever passes alone must pass under the layer: threads that build one
// source at once, a child forked after builds that builds again, and rounds
// of threads × builds × fork × contexts made and released. Every run is
// under the fixture's deadline, every child under its own alarm.

#include <gtest/gtest.h>

#include "layer_fixture.hpp"

namespace kcache::test {
namespace {

using LayerRobust = LayerTest;

// 32 threads building one program, as the driver alone survives: under the
// layer the binary loads of a warm store run one at a time (the device
// data's serialize_loads rule for PoCL with its cache off), cold and warm.
TEST_F(LayerRobust, ThirtyTwoThreadsBuildingOneProgramPassAsTheDriverAloneDoes) {
    const auto alone = run(With::driver, KCACHE_TEST_STRESS_PATH, {"threads", "32"});
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    ASSERT_EQ(value_of(alone.out, "built"), "32") << alone.out;
    for (const char* store : {"cold", "warm", "warm again"}) {
        const auto layered = run(With::layer, KCACHE_TEST_STRESS_PATH, {"threads", "32"});
        EXPECT_EQ(layered.exit_code, 0) << store << ": " << layered.err;
        EXPECT_EQ(value_of(layered.out, "built"), "32") << store << ": " << layered.out;
    }
    EXPECT_NE(counters().find("hit "), std::string::npos) << counters();
}

// A child forked after the layer built (its helpers, its threads, its
// locks in the parent) builds a program of its own and exits; the parent
// then builds and runs a third one.
TEST_F(LayerRobust, AChildForkedAfterBuildsBuildsAndExitsAsWithTheDriverAlone) {
    const auto alone = run(With::driver, KCACHE_TEST_STRESS_PATH, {"fork"});
    ASSERT_EQ(value_of(alone.out, "child"), "exit 0") << alone.out << alone.err;
    ASSERT_EQ(value_of(alone.out, "run"), "10") << alone.out;
    for (const char* store : {"cold", "warm"}) {
        const auto layered = run(With::layer, KCACHE_TEST_STRESS_PATH, {"fork"});
        EXPECT_EQ(value_of(layered.out, "child"), "exit 0")
            << store << ": " << layered.out << layered.err;
        EXPECT_EQ(value_of(layered.out, "run"), "10") << store << ": " << layered.out;
    }
}

// Threads × builds × fork × contexts, a bounded number of rounds for the
// suite (KCACHE_TEST_STRESS_ROUNDS for a longer run by hand).
TEST_F(LayerRobust, StressRoundsThatPassAloneAlsoPassUnderTheLayer) {
    const char* asked = std::getenv("KCACHE_TEST_STRESS_ROUNDS");
    const std::string rounds = asked != nullptr && *asked != '\0' ? asked : "3";
    const auto alone = run(With::driver, KCACHE_TEST_STRESS_PATH, {"stress", rounds});
    ASSERT_EQ(value_of(alone.out, "failed"), "0") << "the driver alone:\n" << alone.out;
    for (const char* store : {"cold", "warm"}) {
        const auto layered = run(With::layer, KCACHE_TEST_STRESS_PATH, {"stress", rounds});
        EXPECT_EQ(layered.exit_code, 0) << store << ": " << layered.err;
        EXPECT_EQ(value_of(layered.out, "rounds"), rounds) << store << ": " << layered.out;
        EXPECT_EQ(value_of(layered.out, "failed"), "0") << store << ":\n"
                                                        << layered.out << layered.err;
    }
}

}  // namespace
}  // namespace kcache::test
