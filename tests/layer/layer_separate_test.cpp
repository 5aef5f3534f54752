// Separate compilation under the layer (label layer): a C application that
// compiles and links (layer_separate) gets the same answers as from the
// driver, build options of its linked programs included; its compiles and
// links are compiled by kcache the first time and answered from the store
// the second, input headers included (keyed by name and content, wherever
// the store lives); a link is keyed by its inputs and its options; a link
// whose compile hangs is stopped at the deadline; and what the layer leaves
// to the driver says so.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "kcache/opencl.h"
#include "layer_fixture.hpp"

namespace kcache::test {
namespace {

using LayerSeparate = LayerTest;

// The application takes the loader's first platform: PoCL alone.
const std::vector<std::string> kPocl = {"OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd"};

// The 12 hex digits of a trace line's key (after "VERDICT rung ").
std::string key_of(const std::string& line) {
    std::smatch m;
    return std::regex_search(line, m, std::regex("^[A-Z]+ [a-z_]+ ([0-9a-f]{12}) ")) ? m.str(1)
                                                                                     : "";
}

// The trace lines of layer_separate's builds, in order: scale's compile, its
// second link, its link with -cl-denorms-are-zero, shift's compile (with an
// input header), twice's compile, use_twice's (it does not build alone),
// the link of the two, and their link with options.
enum Line { scale, scale_again, denormals, shift, twice, use_twice, pair, pair_options, count };

TEST_F(LayerSeparate, ACompileAndLinkIsCompiledByKcacheThenAnsweredFromTheStore) {
    const auto driver = run(With::driver, KCACHE_TEST_SEPARATE_PATH, {}, kPocl);
    const auto first = run(With::layer, KCACHE_TEST_SEPARATE_PATH, {}, kPocl);
    const auto second = run(With::layer, KCACHE_TEST_SEPARATE_PATH, {}, kPocl);
    ASSERT_EQ(driver.exit_code, 0) << driver.err;
    ASSERT_EQ(first.exit_code, 0) << first.err;
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_NE(driver.out.find("scale.results=4 7 10 13\n"), std::string::npos) << driver.out;
    EXPECT_NE(driver.out.find("shift.results=41 42 43 44\n"), std::string::npos) << driver.out;
    EXPECT_NE(driver.out.find("pair.results=3 5 7 9\n"), std::string::npos) << driver.out;
    // Every answer as the driver's, the linked programs' build options (the
    // link's) included.
    EXPECT_EQ(first.out, driver.out);
    EXPECT_EQ(second.out, first.out);
    EXPECT_EQ(value_of(first.out, "scale.options"), "") << first.out;
    EXPECT_EQ(value_of(first.out, "pair_options.options"), "-cl-mad-enable");

    const auto one = trace_lines(first.err);
    const auto two = trace_lines(second.err);
    ASSERT_EQ(one.size(), std::size_t{Line::count}) << first.err;
    ASSERT_EQ(two.size(), std::size_t{Line::count}) << second.err;
    const std::regex jit("JIT jit [0-9a-f]{12} .* \\(load [0-9.]+\\) (clCompileProgram|clLink.*)");
    const std::regex hit(
        "HIT user_store [0-9a-f]{12} .* \\(load [0-9.]+\\) (clCompileProgram|clLink.*)");
    for (const Line l : {Line::scale, Line::shift, Line::twice, Line::pair, Line::pair_options}) {
        EXPECT_TRUE(std::regex_match(one[l], jit)) << one[l];
        EXPECT_TRUE(std::regex_match(two[l], hit)) << two[l];
        EXPECT_EQ(key_of(two[l]), key_of(one[l])) << "the same key";
    }
    EXPECT_TRUE(std::regex_match(one[Line::scale_again], hit)) << one[Line::scale_again];
    // use_twice calls a function it does not define: kcache's build of it
    // fails (recorded), the driver compiles it, and the link is still keyed.
    EXPECT_EQ(one[Line::use_twice].rfind("PASS jit ", 0), 0u) << one[Line::use_twice];
    EXPECT_EQ(two[Line::use_twice].rfind("PASS failure_record ", 0), 0u) << two[Line::use_twice];
    // PoCL refuses the link options OpenCL names (CL_INVALID_LINK_OPTIONS):
    // kcache-jit's link fails (recorded), and the driver refuses it too.
    EXPECT_EQ(value_of(first.out, "scale_denormals.link"),
              std::to_string(CL_INVALID_LINKER_OPTIONS));
    EXPECT_EQ(one[Line::denormals].rfind("PASS jit ", 0), 0u) << one[Line::denormals];
    EXPECT_EQ(two[Line::denormals].rfind("PASS failure_record ", 0), 0u) << two[Line::denormals];
}

TEST_F(LayerSeparate, ALinkIsKeyedByItsInputsAndItsOptions) {
    const auto mad = run(With::layer, KCACHE_TEST_SEPARATE_PATH, {"40"}, kPocl);
    const auto unoptimized =
        run(With::layer, KCACHE_TEST_SEPARATE_PATH, {"40", "-cl-opt-disable"}, kPocl);
    const auto driver =
        run(With::driver, KCACHE_TEST_SEPARATE_PATH, {"40", "-cl-opt-disable"}, kPocl);
    ASSERT_EQ(unoptimized.exit_code, 0) << unoptimized.err;
    EXPECT_EQ(unoptimized.out, driver.out);
    EXPECT_EQ(value_of(unoptimized.out, "pair_options.results"), "3 5 7 9") << unoptimized.out;
    EXPECT_EQ(value_of(unoptimized.out, "pair_options.options"), "-cl-opt-disable");
    const auto a = trace_lines(mad.err);
    const auto b = trace_lines(unoptimized.err);
    ASSERT_EQ(a.size(), std::size_t{Line::count}) << mad.err;
    ASSERT_EQ(b.size(), std::size_t{Line::count}) << unoptimized.err;
    EXPECT_EQ(b[Line::pair].rfind("HIT user_store ", 0), 0u) << b[Line::pair];
    EXPECT_EQ(b[Line::pair_options].rfind("JIT jit ", 0), 0u) << "other options: a miss";
    EXPECT_NE(key_of(b[Line::pair_options]), key_of(a[Line::pair_options]));
    EXPECT_NE(key_of(a[Line::pair_options]), key_of(a[Line::pair]));
    EXPECT_NE(key_of(a[Line::pair]), key_of(a[Line::twice])) << "a link is not its input";
}

TEST_F(LayerSeparate, AnInputHeaderIsKeyedByItsContent) {
    const auto forty = run(With::layer, KCACHE_TEST_SEPARATE_PATH, {"40"}, kPocl);
    const auto seven = run(With::layer, KCACHE_TEST_SEPARATE_PATH, {"7"}, kPocl);
    const auto driver = run(With::driver, KCACHE_TEST_SEPARATE_PATH, {"7"}, kPocl);
    ASSERT_EQ(seven.exit_code, 0) << seven.err;
    EXPECT_EQ(value_of(forty.out, "shift.results"), "41 42 43 44") << forty.out;
    EXPECT_EQ(value_of(seven.out, "shift.results"), "8 9 10 11") << seven.out;
    EXPECT_EQ(seven.out, driver.out);
    const auto traced = trace_lines(seven.err);
    ASSERT_EQ(traced.size(), std::size_t{Line::count}) << seven.err;
    EXPECT_EQ(traced[Line::scale].rfind("HIT user_store ", 0), 0u) << traced[Line::scale];
    EXPECT_EQ(traced[Line::shift].rfind("JIT jit ", 0), 0u)
        << "another header, another key: " << traced[Line::shift];
}

// The key holds input headers by name and content, not by where the store
// keeps anything: a copy of the store at another path answers every build.
TEST_F(LayerSeparate, AStoreAtAnotherPathAnswersTheSameKeys) {
    const auto first = run(With::layer, KCACHE_TEST_SEPARATE_PATH, {}, kPocl);
    const std::filesystem::path other = dir() / "elsewhere" / "store";
    std::filesystem::create_directories(other.parent_path());
    std::filesystem::copy(store_dir(), other, std::filesystem::copy_options::recursive);
    std::filesystem::remove_all(store_dir());
    const auto copied =
        run(With::layer, KCACHE_TEST_SEPARATE_PATH, {}, {kPocl[0], "KCACHE_DIR=" + other.string()});
    ASSERT_EQ(copied.exit_code, 0) << copied.err;
    EXPECT_EQ(copied.out, first.out);
    const auto one = trace_lines(first.err);
    const auto two = trace_lines(copied.err);
    ASSERT_EQ(two.size(), std::size_t{Line::count}) << copied.err;
    for (const Line l : {Line::scale, Line::shift, Line::pair}) {
        EXPECT_EQ(two[l].rfind("HIT user_store ", 0), 0u) << two[l];
        EXPECT_EQ(key_of(two[l]), key_of(one[l]));
    }
}

// A link of a program whose compile includes a file: keyed with the file's
// content. A place the compiler searches that cannot be read (a symbolic
// link to itself in a later -I directory; the compiler stops at the first)
// makes the compile, and so the link, the driver's, with the reason.
TEST_F(LayerSeparate, AHeaderThatCannotBeReadPassesThroughWithItsReason) {
    const std::filesystem::path first_dir = dir() / "a", later = dir() / "b";
    std::filesystem::create_directories(first_dir);
    std::filesystem::create_directories(later);
    std::ofstream(first_dir / "bias.h") << "#define BIAS 1\n";
    const std::vector<std::string> args = {"include",
                                           "-I " + first_dir.string() + " -I " + later.string()};
    const auto readable = run(With::layer, KCACHE_TEST_SEPARATE_PATH, args, kPocl);
    EXPECT_EQ(value_of(readable.out, "pair_options.results"), "3 5 7 9") << readable.out;
    auto lines = trace_lines(readable.err);
    ASSERT_EQ(lines.size(), 4u) << readable.err;
    EXPECT_EQ(lines[0].rfind("JIT jit ", 0), 0u) << lines[0];
    EXPECT_EQ(lines[3].rfind("JIT jit ", 0), 0u) << lines[3];

    std::filesystem::create_symlink("bias.h", later / "bias.h");
    const auto driver = run(With::driver, KCACHE_TEST_SEPARATE_PATH, args, kPocl);
    const auto unreadable = run(With::layer, KCACHE_TEST_SEPARATE_PATH, args, kPocl);
    EXPECT_EQ(value_of(driver.out, "pair_options.results"), "3 5 7 9") << driver.out;
    EXPECT_EQ(unreadable.out, driver.out);
    lines = trace_lines(unreadable.err);
    ASSERT_EQ(lines.size(), 4u) << unreadable.err;
    EXPECT_EQ(lines[0].rfind("PASS driver ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find("b/bias.h cannot be read"), std::string::npos) << lines[0];
    for (const std::size_t link : {2u, 3u}) {
        EXPECT_EQ(lines[link].rfind("PASS driver ", 0), 0u) << lines[link];
        EXPECT_NE(lines[link].find("an input program whose compile kcache did not answer"),
                  std::string::npos)
            << lines[link];
    }
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

// A link whose compile takes longer than the deadline: its inputs' compiles
// are stored by a first process with a long deadline, then a link with other
// options (a miss) under a short one is stopped at it, says so, and its
// record answers the next process at once.
TEST_F(LayerSeparate, ALinkPastTheDeadlineFailsAtTheDeadline) {
    const std::string levels = "14";
    const auto stored = run(With::layer, KCACHE_TEST_SEPARATE_PATH, {"slow-link", levels},
                            {kPocl[0], "KCACHE_JIT_TIMEOUT_MS=300000"});
    ASSERT_EQ(value_of(stored.out, "slow_link.link"), "0") << stored.out << stored.err;
    const std::vector<std::string> env = {kPocl[0], "KCACHE_JIT_TIMEOUT_MS=1000"};
    const std::vector<std::string> args = {"slow-link", levels, "-cl-mad-enable"};
    const auto first = run(With::layer, KCACHE_TEST_SEPARATE_PATH, args, env);
    EXPECT_EQ(value_of(first.out, "slow_link.compile"), "0") << first.out << first.err;
    EXPECT_EQ(value_of(first.out, "slow_link.link"), std::to_string(CL_LINK_PROGRAM_FAILURE))
        << first.out << first.err;
    EXPECT_LE(std::stoi("0" + value_of(first.out, "slow_link.ms")), 1500) << first.out;
    EXPECT_EQ(value_of(first.out, "slow_link.status"), std::to_string(CL_BUILD_ERROR));
    EXPECT_EQ(value_of(first.out, "slow_link.options"), "-cl-mad-enable");
    EXPECT_NE(value_of(first.out, "slow_link.log").find("stopped at its deadline of 1000 ms"),
              std::string::npos)
        << first.out;
    const auto lines = trace_lines(first.err);
    ASSERT_FALSE(lines.empty()) << first.err;
    EXPECT_EQ(lines.back().rfind("FAIL jit ", 0), 0u) << lines.back();
    const auto second = run(With::layer, KCACHE_TEST_SEPARATE_PATH, args, env);
    EXPECT_EQ(value_of(second.out, "slow_link.link"), std::to_string(CL_LINK_PROGRAM_FAILURE));
    EXPECT_LE(std::stoi("0" + value_of(second.out, "slow_link.ms")), 500) << second.out;
    const auto again = trace_lines(second.err);
    ASSERT_FALSE(again.empty()) << second.err;
    EXPECT_EQ(again.back().rfind("FAIL failure_record ", 0), 0u) << again.back();
}

}  // namespace
}  // namespace kcache::test
