// Real applications from Debian packages under the layer (label layer): a
// pyopencl script and clpeak run as without it, and their second run's
// builds are all store hits; a CLBlast tuner (slow) compiles nothing the
// second time.

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include <nlohmann/json.hpp>

#include "layer_fixture.hpp"

namespace kcache::test {
namespace {

using LayerApps = LayerTest;

// How many trace lines start with `verdict` ("HIT ", "JIT ").
long count_of(const std::vector<std::string>& lines, const std::string& verdict) {
    return std::count_if(lines.begin(), lines.end(),
                         [&](const std::string& l) { return l.rfind(verdict, 0) == 0; });
}

// Output without its measurements: what an application reports, not how fast.
std::string without_numbers(const std::string& text) {
    return std::regex_replace(text, std::regex("[0-9]+(\\.[0-9]+)?"), "N");
}

TEST_F(LayerApps, APyopenclScriptGetsStoreHitsInASecondProcessAndRightResults) {
    const std::vector<std::string> env = {"PYOPENCL_NO_CACHE=1"};
    const std::string script = KCACHE_TEST_LAYER_SOURCE_DIR "/pyopencl_app.py";
    const auto first = run(With::layer, "/usr/bin/python3", {script}, env);
    const auto second = run(With::layer, "/usr/bin/python3", {script}, env);
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_EQ(second.out, first.out);
    EXPECT_NE(second.out.find("results ok; scale add"), std::string::npos) << second.out;
    EXPECT_EQ(count_of(trace_lines(first.err), "JIT jit "), 2) << first.err;
    EXPECT_EQ(count_of(trace_lines(second.err), "HIT user_store "), 2) << second.err;
    EXPECT_EQ(trace_lines(second.err).size(), 2u) << second.err;

    const auto stats = run(With::driver, KCACHE_TEST_CLI_PATH, {"stats", "--json"});
    ASSERT_EQ(stats.exit_code, 0) << stats.err;
    const auto layer = nlohmann::json::parse(stats.out)["layer"];
    EXPECT_EQ(layer["hit"], 2) << stats.out;
    EXPECT_EQ(layer["jit"], 2) << stats.out;
    EXPECT_EQ(layer["pass"], 0) << stats.out;
}

TEST_F(LayerApps, ClpeakReportsTheSameTestsAndItsSecondRunIsAStoreHit) {
    const std::vector<std::string> args = {"--kernel-latency"};
    // clpeak exits 255 on a platform without devices (rusticl's, which setup
    // installs, until RUSTICL_ENABLE names a driver): the loader offers it PoCL alone.
    const std::vector<std::string> env = {"OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd"};
    const auto driver = run(With::driver, "/usr/bin/clpeak", args, env);
    const auto first = run(With::layer, "/usr/bin/clpeak", args, env);
    const auto second = run(With::layer, "/usr/bin/clpeak", args, env);
    ASSERT_EQ(driver.exit_code, 0) << driver.err;
    EXPECT_EQ(first.exit_code, 0) << first.err;
    EXPECT_EQ(second.exit_code, 0) << second.err;
    EXPECT_NE(driver.out.find("Kernel launch latency"), std::string::npos) << driver.out;
    EXPECT_EQ(without_numbers(first.out), without_numbers(driver.out));
    EXPECT_EQ(without_numbers(second.out), without_numbers(driver.out));
    const auto traced = trace_lines(second.err);
    EXPECT_GE(count_of(traced, "HIT user_store "), 1) << second.err;
    EXPECT_EQ(count_of(traced, "HIT "), static_cast<long>(traced.size())) << second.err;
}

}  // namespace
}  // namespace kcache::test
