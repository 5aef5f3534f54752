// Separate compilation under the layer (label layer): a C application that
// compiles and links (layer_separate) gets the same answers as from the
// driver, its compile is compiled by kcache the first time and answered
// from the store the second, input headers included, and what the layer
// leaves to the driver (a link with options) says so.

#include <gtest/gtest.h>

#include <regex>

#include "kcache/opencl.h"
#include "layer_fixture.hpp"

namespace kcache::test {
namespace {

using LayerSeparate = LayerTest;

// `out` without the build options of the linked programs the cache
// answered: they report those the cache built them with (the compile's,
// an input header's directory first), the driver's the link's.
std::string without_linked_options(const std::string& out) {
    return std::regex_replace(out, std::regex("(^|\n)(scale|scale_again|shift)\\.options=[^\n]*"),
                              "$1");
}

// The application takes the loader's first platform: PoCL alone.
const std::vector<std::string> kPocl = {"OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd"};

TEST_F(LayerSeparate, ACompileAndLinkIsCompiledByKcacheThenAnsweredFromTheStore) {
    const auto driver = run(With::driver, KCACHE_TEST_SEPARATE_PATH, {}, kPocl);
    const auto first = run(With::layer, KCACHE_TEST_SEPARATE_PATH, {}, kPocl);
    const auto second = run(With::layer, KCACHE_TEST_SEPARATE_PATH, {}, kPocl);
    ASSERT_EQ(driver.exit_code, 0) << driver.err;
    ASSERT_EQ(first.exit_code, 0) << first.err;
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_NE(driver.out.find("scale.results=4 7 10 13\n"), std::string::npos) << driver.out;
    EXPECT_NE(driver.out.find("shift.results=41 42 43 44\n"), std::string::npos) << driver.out;
    EXPECT_EQ(without_linked_options(first.out), without_linked_options(driver.out));
    EXPECT_EQ(second.out, first.out);
    EXPECT_EQ(value_of(first.out, "scale.options"), "-DSCALE=3") << first.out;

    const auto one = trace_lines(first.err);
    const auto two = trace_lines(second.err);
    ASSERT_EQ(one.size(), 4u) << first.err;
    ASSERT_EQ(two.size(), 4u) << second.err;
    const std::regex jit_compile("JIT jit [0-9a-f]{12} .* \\(load [0-9.]+\\) clCompileProgram");
    const std::regex hit_compile(
        "HIT user_store [0-9a-f]{12} .* \\(load [0-9.]+\\) clCompileProgram");
    const std::regex hit_link("HIT [a-z_]+ [0-9a-f]{12} .* \\(load [0-9.]+\\) clLinkProgram");
    for (const std::size_t compile : {0u, 3u}) {  // scale's, shift's with its header
        EXPECT_TRUE(std::regex_match(one[compile], jit_compile)) << one[compile];
        EXPECT_TRUE(std::regex_match(two[compile], hit_compile)) << two[compile];
        EXPECT_EQ(two[compile].substr(15, 12), one[compile].substr(8, 12)) << "the same key";
    }
    for (const auto* lines : {&one, &two}) {
        EXPECT_TRUE(std::regex_match((*lines)[1], hit_link)) << (*lines)[1];
        EXPECT_NE((*lines)[2].find("PASS driver - "), std::string::npos) << (*lines)[2];
        EXPECT_NE((*lines)[2].find("link options are the driver's"), std::string::npos);
    }
}

TEST_F(LayerSeparate, AnInputHeaderIsKeyedByItsContent) {
    const auto forty = run(With::layer, KCACHE_TEST_SEPARATE_PATH, {"40"}, kPocl);
    const auto seven = run(With::layer, KCACHE_TEST_SEPARATE_PATH, {"7"}, kPocl);
    const auto driver = run(With::driver, KCACHE_TEST_SEPARATE_PATH, {"7"}, kPocl);
    ASSERT_EQ(seven.exit_code, 0) << seven.err;
    EXPECT_EQ(value_of(forty.out, "shift.results"), "41 42 43 44") << forty.out;
    EXPECT_EQ(value_of(seven.out, "shift.results"), "8 9 10 11") << seven.out;
    EXPECT_EQ(without_linked_options(seven.out), without_linked_options(driver.out));
    const auto traced = trace_lines(seven.err);
    ASSERT_EQ(traced.size(), 4u) << seven.err;
    EXPECT_EQ(traced[0].rfind("HIT user_store ", 0), 0u) << traced[0];
    EXPECT_EQ(traced[3].rfind("JIT jit ", 0), 0u) << "another header, another key: " << traced[3];
}

// A compile past the deadline fails as a build does: at the deadline, with
// kcache's log, and the record answers the next process at once.
TEST_F(LayerSeparate, ACompilePastTheDeadlineFailsAtTheDeadline) {
    const std::vector<std::string> env = {"KCACHE_JIT_TIMEOUT_MS=2000"};
    const auto first = run(With::layer, KCACHE_TEST_PROBE_PATH, {"slow-compile"}, env);
    EXPECT_EQ(value_of(first.out, "slow.build"), std::to_string(CL_COMPILE_PROGRAM_FAILURE))
        << first.out << first.err;
    EXPECT_LE(std::stoi("0" + value_of(first.out, "slow.ms")), 2500) << first.out;
    EXPECT_EQ(value_of(first.out, "slow.status"), std::to_string(CL_BUILD_ERROR));
    EXPECT_NE(value_of(first.out, "slow.log").find("stopped at its deadline of 2000 ms"),
              std::string::npos)
        << first.out;
    const auto second = run(With::layer, KCACHE_TEST_PROBE_PATH, {"slow-compile"}, env);
    EXPECT_EQ(value_of(second.out, "slow.build"), std::to_string(CL_COMPILE_PROGRAM_FAILURE));
    EXPECT_LE(std::stoi("0" + value_of(second.out, "slow.ms")), 500) << second.out;
    const auto traced = trace_lines(second.err);
    ASSERT_EQ(traced.size(), 1u) << second.err;
    EXPECT_EQ(traced[0].rfind("FAIL failure_record ", 0), 0u) << traced[0];
}

}  // namespace
}  // namespace kcache::test
