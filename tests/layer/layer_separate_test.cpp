// Separate compilation under the layer (label layer): a C application that
// compiles and links (layer_separate) gets the same answers as from the
// driver, build options of its linked programs included; its compiles and
// links are compiled by kcache the first time and answered from the store
// the second, input headers included (keyed by name and content, wherever
// the store lives); a link is keyed by its inputs and its options; a
// program that does not build alone is compiled alone by kcache, also under
// the deadline, and a compile error's record answers the next process; a
// link whose compile hangs is stopped at the deadline; and what the layer
// leaves to the driver says so.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "kcache/opencl.h"
#include "layer_fixture.hpp"

namespace kcache::test {
namespace {

class LayerSeparate : public LayerTest {
  protected:
    // Expects `what`'s answer to `call` in the application's `out` to be
    // `code` within `within_ms` milliseconds: stopped at the deadline of
    // `deadline_ms`, as its build status and log say.
    static void expect_stopped(const compiler::RunResult& r, const std::string& what,
                               const std::string& call, cl_int code, int deadline_ms,
                               int within_ms) {
        EXPECT_EQ(value_of(r.out, what + "." + call), std::to_string(code)) << r.out << r.err;
        EXPECT_LE(std::stoi("0" + value_of(r.out, what + ".ms")), within_ms) << r.out;
        EXPECT_EQ(value_of(r.out, what + ".status"), std::to_string(CL_BUILD_ERROR)) << r.out;
        const std::string said =
            "stopped at its deadline of " + std::to_string(deadline_ms) + " ms";
        EXPECT_NE(value_of(r.out, what + ".log").find(said), std::string::npos) << r.out;
    }
};

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
    // fails (recorded), and its compile alone answers.
    EXPECT_TRUE(std::regex_match(one[Line::use_twice], jit)) << one[Line::use_twice];
    EXPECT_TRUE(std::regex_match(two[Line::use_twice], hit)) << two[Line::use_twice];
    // PoCL refuses the link options OpenCL names (CL_INVALID_LINK_OPTIONS):
    // kcache-jit's link fails (recorded), and the driver refuses it too.
    EXPECT_EQ(value_of(first.out, "scale_denormals.link"),
              std::to_string(CL_INVALID_LINKER_OPTIONS));
    EXPECT_EQ(one[Line::denormals].rfind("PASS jit ", 0), 0u) << one[Line::denormals];
    EXPECT_EQ(two[Line::denormals].rfind("PASS failure_record ", 0), 0u) << two[Line::denormals];
}

// Two programs, one calling a function the other defines: the one that
// does not build alone is compiled alone in kcache-jit (clCompileProgram
// only) and stored apart from its build, so that a second process answers
// both compiles and both links from the store, and the driver compiles
// nothing.
TEST_F(LayerSeparate, AProgramThatDoesNotBuildAloneIsCompiledByKcacheThenAnsweredFromTheStore) {
    const auto driver = run(With::driver, KCACHE_TEST_SEPARATE_PATH, {"pair"}, kPocl);
    const auto first = run(With::layer, KCACHE_TEST_SEPARATE_PATH, {"pair"}, kPocl);
    const auto second = run(With::layer, KCACHE_TEST_SEPARATE_PATH, {"pair"}, kPocl);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_EQ(value_of(driver.out, "pair.results"), "3 5 7 9") << driver.out;
    EXPECT_EQ(value_of(driver.out, "pair_options.results"), "3 5 7 9") << driver.out;
    EXPECT_EQ(first.out, driver.out);
    EXPECT_EQ(second.out, driver.out);
    const auto one = trace_lines(first.err);
    const auto two = trace_lines(second.err);
    ASSERT_EQ(one.size(), 4u) << first.err;  // twice, use_twice, and the two links
    ASSERT_EQ(two.size(), 4u) << second.err;
    for (std::size_t i = 0; i < one.size(); ++i) {
        EXPECT_EQ(one[i].rfind("JIT jit ", 0), 0u) << one[i];
        EXPECT_EQ(two[i].rfind("HIT user_store ", 0), 0u) << two[i];
        EXPECT_EQ(key_of(two[i]), key_of(one[i])) << "the same key";
    }
    EXPECT_NE(two[1].find("clCompileProgram"), std::string::npos) << two[1];
    EXPECT_EQ(counters(), "hit 4\njit 4\nfail 0\npass 0\n") << "no compile was the driver's";

    // Its compile's entry is not its build's: a build of the same text is
    // the recorded failure of another key.
    const auto alone =
        run(With::layer, KCACHE_TEST_SEPARATE_PATH, {"compile-one", "use_twice"}, kPocl);
    EXPECT_EQ(value_of(alone.out, "use_twice.compile"), "0") << alone.out << alone.err;
    EXPECT_EQ(value_of(alone.out, "use_twice.build"), std::to_string(CL_BUILD_PROGRAM_FAILURE));
    const auto lines = trace_lines(alone.err);
    ASSERT_EQ(lines.size(), 2u) << alone.err;
    EXPECT_EQ(lines[0].rfind("HIT user_store ", 0), 0u) << lines[0];
    EXPECT_EQ(key_of(lines[0]), key_of(two[1]));
    EXPECT_EQ(lines[1].rfind("PASS failure_record ", 0), 0u) << lines[1];
    EXPECT_NE(key_of(lines[1]), key_of(lines[0]));
}

// A compile error still fails the compile, with the driver's log; kcache's
// compile of it alone failed too, and its record answers the next process
// at once, with the driver's log in kcache's.
TEST_F(LayerSeparate, ACompileErrorFailsAndItsRecordAnswersTheNextProcess) {
    const std::vector<std::string> args = {"compile-one", "broken"};
    const auto driver = run(With::driver, KCACHE_TEST_SEPARATE_PATH, args, kPocl);
    const auto first = run(With::layer, KCACHE_TEST_SEPARATE_PATH, args, kPocl);
    const auto second = run(With::layer, KCACHE_TEST_SEPARATE_PATH, args, kPocl);
    for (const auto* r : {&driver, &first, &second}) {
        EXPECT_EQ(value_of(r->out, "broken.compile"), std::to_string(CL_COMPILE_PROGRAM_FAILURE))
            << r->out << r->err;
        EXPECT_EQ(value_of(r->out, "broken.status"), std::to_string(CL_BUILD_ERROR)) << r->out;
        EXPECT_NE(value_of(r->out, "broken.log").find("undefined_name"), std::string::npos)
            << r->out;
        EXPECT_EQ(value_of(r->out, "broken.build"), std::to_string(CL_BUILD_PROGRAM_FAILURE));
    }
    EXPECT_EQ(value_of(first.out, "broken.log").find("kcache: "), std::string::npos)
        << "the first process's compile is the driver's: " << first.out;
    const auto one = trace_lines(first.err);
    const auto two = trace_lines(second.err);
    ASSERT_EQ(one.size(), 2u) << first.err;
    ASSERT_EQ(two.size(), 2u) << second.err;
    EXPECT_EQ(one[0].rfind("PASS jit ", 0), 0u) << one[0];
    EXPECT_EQ(two[0].rfind("FAIL failure_record ", 0), 0u) << two[0];
    EXPECT_EQ(key_of(two[0]), key_of(one[0]));
    EXPECT_NE(value_of(second.out, "broken.log").find("kcache gc --failures"), std::string::npos)
        << second.out;
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
// keeps anything: a copy of the store at another path answers every build,
// a compile alone among them.
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
    for (const Line l : {Line::scale, Line::shift, Line::use_twice, Line::pair}) {
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
    expect_stopped(first, "slow", "build", CL_COMPILE_PROGRAM_FAILURE, 2000, 2500);
    const auto second = run(With::layer, KCACHE_TEST_PROBE_PATH, {"slow-compile"}, env);
    EXPECT_EQ(value_of(second.out, "slow.build"), std::to_string(CL_COMPILE_PROGRAM_FAILURE));
    EXPECT_LE(std::stoi("0" + value_of(second.out, "slow.ms")), 500) << second.out;
    const auto traced = trace_lines(second.err);
    ASSERT_EQ(traced.size(), 1u) << second.err;
    EXPECT_EQ(traced[0].rfind("FAIL failure_record ", 0), 0u) << traced[0];
}

// A compile alone is bounded as a build is: one that never answers (the
// stand-in helper's, after the build of the program failed as it does) is
// stopped at the deadline with kcache's log, and its record answers the
// next process at once.
TEST_F(LayerSeparate, ACompileAloneThatHangsIsStoppedAtTheDeadline) {
    const std::vector<std::string> env = {kPocl[0], "KCACHE_JIT_TIMEOUT_MS=2000",
                                          "KCACHE_JIT_HELPERS=0",
                                          "KCACHE_JIT_PATH=" KCACHE_TEST_HANGING_JIT_PATH};
    const std::vector<std::string> args = {"compile-one", "use_twice"};
    const auto first = run(With::layer, KCACHE_TEST_SEPARATE_PATH, args, env);
    // The build (which fails at once) and the compile alone, stopped at its deadline.
    expect_stopped(first, "use_twice", "compile", CL_COMPILE_PROGRAM_FAILURE, 2000, 4000);
    EXPECT_GE(std::stoi("0" + value_of(first.out, "use_twice.ms")), 2000) << first.out;
    EXPECT_EQ(value_of(first.out, "use_twice.compile_callback_is_program"), "1");
    const auto one = trace_lines(first.err);
    ASSERT_FALSE(one.empty()) << first.err;
    EXPECT_EQ(one[0].rfind("FAIL jit ", 0), 0u) << one[0];
    const auto second = run(With::layer, KCACHE_TEST_SEPARATE_PATH, args, env);
    EXPECT_EQ(value_of(second.out, "use_twice.compile"),
              std::to_string(CL_COMPILE_PROGRAM_FAILURE));
    EXPECT_LE(std::stoi("0" + value_of(second.out, "use_twice.ms")), 500) << second.out;
    const auto two = trace_lines(second.err);
    ASSERT_FALSE(two.empty()) << second.err;
    EXPECT_EQ(two[0].rfind("FAIL failure_record ", 0), 0u) << two[0];
    EXPECT_EQ(key_of(two[0]), key_of(one[0]));
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
    expect_stopped(first, "slow_link", "link", CL_LINK_PROGRAM_FAILURE, 1000, 1500);
    EXPECT_EQ(value_of(first.out, "slow_link.options"), "-cl-mad-enable");
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
