// The layer (label layer): an application's program and kernel queries answer
// the same with and without it, a second process's builds are store hits,
// the store counts the layer's hits, a program never built opens no cache,
// a store that cannot open passes
// everything through, a compile past the deadline fails the build at the
// deadline and is answered at once next time, and a program from IL on a
// driver without IL keeps the driver's answers.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "il_support.hpp"
#include "kcache/opencl.h"
#include "layer_fixture.hpp"
#include "layer_probe.hpp"

namespace kcache::test {
namespace {

using Layer = LayerTest;

bool has(const std::vector<std::string>& lines, const std::string& prefix) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
}

TEST_F(Layer, EveryProgramAndKernelAnswerIsTheDriversAndASecondProcessHits) {
    const auto driver = run(With::driver, KCACHE_TEST_PROBE_PATH, {"entry"});
    const auto first = run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"});
    const auto second = run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"});
    ASSERT_EQ(driver.exit_code, 0) << driver.err;
    EXPECT_EQ(value_of(driver.out, "run.val3"), "45");
    EXPECT_EQ(value_of(driver.out, "twice.run2"), "75");
    EXPECT_EQ(value_of(driver.out, "bad.build"), std::to_string(CL_BUILD_PROGRAM_FAILURE));
    EXPECT_NE(value_of(driver.out, "bad.device0.build_log"), "");
    EXPECT_EQ(first.out, driver.out) << first.err;
    EXPECT_EQ(second.out, driver.out) << second.err;

    // The three programs built from source and the one compiled separately:
    // compiled, then hits. The compile error is the driver's (answered by
    // it for its log).
    const auto traced = trace_lines(second.err);
    EXPECT_TRUE(has(trace_lines(first.err), "JIT jit ")) << first.err;
    EXPECT_EQ(std::count_if(traced.begin(), traced.end(),
                            [](const std::string& l) { return l.rfind("HIT ", 0) == 0; }),
              4)
        << second.err;
    EXPECT_FALSE(has(traced, "JIT")) << second.err;
    EXPECT_TRUE(std::any_of(traced.begin(), traced.end(), [](const std::string& l) {
        return l.rfind("HIT ", 0) == 0 && l.find(") clCompileProgram") != std::string::npos;
    })) << second.err;
    EXPECT_NE(counters().find("hit 4\n"), std::string::npos) << counters();
}

// A hit's line says how much of its time was the driver's load of the
// binary ("HIT user_store 3fa2c1d09e1b 1.17 ms (load 1.05)"), so that
// kcache's own part is known without the library's trace spans.
TEST_F(Layer, AHitsTraceLineSaysHowMuchOfItWasTheDriversLoad) {
    ASSERT_EQ(run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"}).exit_code, 0);
    const auto second = run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"});
    const std::regex hit(
        R"(HIT \S+ [0-9a-f]+ ([0-9.]+) ms \(load ([0-9.]+)\)( clCompileProgram)?)");
    int hits = 0;
    for (const std::string& line : trace_lines(second.err)) {
        std::smatch m;
        if (line.rfind("HIT ", 0) != 0) {
            continue;
        }
        ASSERT_TRUE(std::regex_match(line, m, hit)) << line;
        EXPECT_GT(std::stod(m[2]), 0.0) << line;
        EXPECT_LE(std::stod(m[2]), std::stod(m[1])) << line;
        ++hits;
    }
    EXPECT_EQ(hits, 4) << second.err;
}

TEST_F(Layer, AProgramForTwoDevicesIsOneProgramWithBothBinaries) {
    const std::vector<std::string> two = {"POCL_DEVICES=pthread pthread"};
    const auto driver = run(With::driver, KCACHE_TEST_PROBE_PATH, {"entry"}, two);
    const auto first = run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"}, two);
    const auto second = run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"}, two);
    ASSERT_EQ(value_of(driver.out, "devices"), "2") << driver.out;
    EXPECT_EQ(value_of(driver.out, "built.binary_size_nonzero.1"), "1");
    EXPECT_EQ(first.out, driver.out) << first.err;
    EXPECT_EQ(second.out, driver.out) << second.err;
    EXPECT_TRUE(has(trace_lines(second.err), "HIT ")) << second.err;
}

TEST_F(Layer, AStoreThatCannotOpenPassesEveryCallThroughAndSaysSoOnce) {
    std::ofstream(dir() / "not-a-directory") << "x";
    const std::vector<std::string> env = {"KCACHE_DIR=" + (dir() / "not-a-directory").string()};
    const auto driver = run(With::driver, KCACHE_TEST_PROBE_PATH, {"entry"}, env);
    const auto layered = run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"}, env);
    EXPECT_EQ(layered.exit_code, 0);
    EXPECT_EQ(layered.out, driver.out) << layered.err;
    const auto lines = trace_lines(layered.err);
    ASSERT_EQ(lines.size(), 1u) << layered.err;
    EXPECT_NE(lines[0].find("could not be opened"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("straight to the driver"), std::string::npos) << lines[0];
}

// The layer's cache closes at exit like a library caller's: the store's
// hit counts and last-use times (its eviction order) count the layer's hits.
TEST_F(Layer, StoreHitsUnderTheLayerAreWrittenBackToTheStoreAtExit) {
    const auto first = run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"});
    const auto second = run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"});
    ASSERT_EQ(second.exit_code, 0) << second.err;
    ASSERT_NE(counters().find("hit 4\n"), std::string::npos) << counters();
    const auto stats = run(With::driver, KCACHE_TEST_CLI_PATH, {"stats", "--json"});
    ASSERT_EQ(stats.exit_code, 0) << stats.err;
    const auto tiers = nlohmann::json::parse(stats.out)["tiers"];
    ASSERT_FALSE(tiers.empty()) << stats.out;
    EXPECT_EQ(tiers[0]["name"], "user") << stats.out;
    EXPECT_EQ(tiers[0]["hits"], 4) << stats.out;
}

// The cache opens at a program's first build: an application that only
// creates and queries programs gets the driver's answers and no store.
TEST_F(Layer, AProgramThatIsNeverBuiltOpensNoCache) {
    const auto driver = run(With::driver, KCACHE_TEST_PROBE_PATH, {"unbuilt"});
    const auto layered = run(With::layer, KCACHE_TEST_PROBE_PATH, {"unbuilt"});
    ASSERT_EQ(driver.exit_code, 0) << driver.err;
    EXPECT_EQ(value_of(driver.out, "unbuilt.release"), "0") << driver.out;
    EXPECT_EQ(layered.out, driver.out) << layered.err;
    EXPECT_TRUE(trace_lines(layered.err).empty()) << layered.err;
    EXPECT_FALSE(std::filesystem::exists(store_dir())) << "the cache was opened";
}

// The slow kernel compiles for minutes on PoCL: the build fails at the 2 s
// deadline with kcache's log, the helper is gone, and the next process gets
// the failure record without compiling.
TEST_F(Layer, ACompilePastTheDeadlineFailsTheBuildAtTheDeadlineAndTheRecordAnswersAtOnce) {
    const std::vector<std::string> env = {"KCACHE_JIT_TIMEOUT_MS=2000"};
    const auto first = run(With::layer, KCACHE_TEST_PROBE_PATH, {"slow"}, env);
    EXPECT_EQ(value_of(first.out, "slow.build"), std::to_string(CL_BUILD_PROGRAM_FAILURE))
        << first.out << first.err;
    EXPECT_LE(std::stoi("0" + value_of(first.out, "slow.ms")), 2500) << first.out;
    EXPECT_EQ(value_of(first.out, "slow.status"), std::to_string(CL_BUILD_ERROR));
    const std::string log = value_of(first.out, "slow.log");
    EXPECT_NE(log.find("stopped at its deadline of 2000 ms"), std::string::npos) << log;
    EXPECT_NE(log.find("KCACHE_JIT_TIMEOUT_MS"), std::string::npos) << log;
    EXPECT_TRUE(has(trace_lines(first.err), "FAIL jit ")) << first.err;

    // Helpers exit with the process that started them.
    auto left = processes_of_this_store();
    for (int i = 0; i < 50 && !left.empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        left = processes_of_this_store();
    }
    EXPECT_TRUE(left.empty()) << left.size() << " processes of this store are left, pid "
                              << left.front();

    const auto second = run(With::layer, KCACHE_TEST_PROBE_PATH, {"slow"}, env);
    EXPECT_EQ(value_of(second.out, "slow.build"), std::to_string(CL_BUILD_PROGRAM_FAILURE));
    EXPECT_LE(std::stoi("0" + value_of(second.out, "slow.ms")), 500) << second.out;
    EXPECT_TRUE(has(trace_lines(second.err), "FAIL failure_record ")) << second.err;
    EXPECT_NE(value_of(second.out, "slow.log").find("a recorded failure answered at once"),
              std::string::npos);
}

// On a driver without cl_khr_il_program (Debian's PoCL) a program from IL,
// a module's header alone or a whole module, keeps the driver's answers,
// passed through and traced as PASS with the reason; nothing is built.
// (layer_il_test.cpp: the answers on a driver that loads IL.)
TEST_F(Layer, AProgramFromIlOnADriverWithoutIlGetsTheDriversAnswer) {
    ASSERT_EQ(test_device_il_version(), "") << "this test is about a driver without IL";
    const auto module = dir() / "scale.spv";
    std::ofstream(module, std::ios::binary) << spirv_of(probe::kSource, {}, "-DVAL=3");
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"il"}, std::vector<std::string>{"il-run", module.string()}}) {
        const auto driver = run(With::driver, KCACHE_TEST_PROBE_PATH, args);
        const auto layer = run(With::layer, KCACHE_TEST_PROBE_PATH, args);
        ASSERT_EQ(driver.exit_code, 0) << driver.err;
        ASSERT_EQ(layer.exit_code, 0) << layer.err;
        EXPECT_NE(driver.out, "") << args[0];
        EXPECT_EQ(layer.out, driver.out) << args[0];
        const auto lines = trace_lines(layer.err);
        EXPECT_TRUE(has(lines, "PASS driver - ")) << layer.err;
        EXPECT_TRUE(std::all_of(lines.begin(), lines.end(), [](const std::string& l) {
            return l.rfind("PASS ", 0) == 0;
        })) << layer.err;
        EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
            return l.find("a device loads no IL (no cl_khr_il_program)") != std::string::npos;
        })) << layer.err;
    }
}

}  // namespace
}  // namespace kcache::test
