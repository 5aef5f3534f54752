// Programs from IL under the layer on the SPIR-V PoCL (label il:
// scripts/il-driver.sh builds it, the loader is offered it alone): the first
// build is a miss built from the module in kcache-jit and stored under the
// module's digest, a second process's is a store hit, and every answer
// (queries, callbacks, kernels and their results) is the driver's; a module
// the driver refuses gets the driver's error.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "il_support.hpp"
#include "kcache/common/sha256.hpp"
#include "kcache/store/store.hpp"
#include "layer_fixture.hpp"
#include "layer_probe.hpp"

namespace kcache::test {
namespace {

class LayerIl : public LayerTest {
  protected:
    void SetUp() override {
        LayerTest::SetUp();
        ASSERT_NE(test_device_il_version().find("SPIR-V"), std::string::npos)
            << "the test device reports no SPIR-V: run scripts/il-driver.sh (ctest -L il "
               "offers its driver to the loader)";
    }

    // `bytes` in the file `name` of the test's directory.
    std::string file_of(const std::string& name, const std::string& bytes) {
        const auto path = dir() / name;
        std::ofstream(path, std::ios::binary) << bytes;
        return path.string();
    }
};

long count_of(const std::vector<std::string>& lines, const std::string& prefix) {
    return std::count_if(lines.begin(), lines.end(),
                         [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
}

TEST_F(LayerIl, AMissIsBuiltFromTheModuleInTheHelperAndTheNextProcessHitsWithTheDriversAnswers) {
    const std::string module = spirv_of(probe::kSource, {}, "-DVAL=3");
    const std::string file = file_of("scale.spv", module);
    const auto driver = run(With::driver, KCACHE_TEST_PROBE_PATH, {"il-run", file});
    const auto first = run(With::layer, KCACHE_TEST_PROBE_PATH, {"il-run", file});
    const auto second = run(With::layer, KCACHE_TEST_PROBE_PATH, {"il-run", file});
    ASSERT_EQ(driver.exit_code, 0) << driver.err;
    EXPECT_EQ(value_of(driver.out, "il.build"), "0") << driver.out;
    EXPECT_EQ(value_of(driver.out, "il.run.val3"), "45") << driver.out;
    EXPECT_EQ(value_of(driver.out, "il.build.notify_program_is_the_program"), "1");
    EXPECT_EQ(value_of(driver.out, "il.il_size_is_the_module's"), "1");
    EXPECT_EQ(first.out, driver.out) << first.err;
    EXPECT_EQ(second.out, driver.out) << second.err;

    // The build, then the rebuild the driver refuses while kernels hold it.
    const auto one = trace_lines(first.err);
    const auto two = trace_lines(second.err);
    EXPECT_EQ(count_of(one, "JIT jit "), 1) << first.err;
    EXPECT_EQ(count_of(two, "HIT user_store "), 1) << second.err;
    EXPECT_EQ(count_of(two, "JIT"), 0) << second.err;
    EXPECT_EQ(count_of(one, "PASS driver "), 1) << first.err;
    EXPECT_EQ(counters(), "hit 1\njit 1\nfail 0\npass 2\n");

    // Keyed by the module's digest and the build's options.
    auto store = store::Store::open(store_dir());
    ASSERT_TRUE(store);
    auto entries = store->list();
    ASSERT_TRUE(entries);
    ASSERT_EQ(entries->size(), 1u);
    EXPECT_EQ(entries->front().fields.source_digest, sha256_hex(module));
    EXPECT_EQ(entries->front().fields.build_options, "-cl-mad-enable");
    EXPECT_EQ(entries->front().fields.kernel_name, "clCreateProgramWithIL");
}

// Modules the driver refuses at their creation (bytes without SPIR-V's
// magic number, a module's header alone): the driver's error, passed on and
// traced as PASS with the reason.
TEST_F(LayerIl, AModuleTheDriverRefusesGetsTheDriversError) {
    const std::string bad = file_of("bad.spv", "not a SPIR-V module, 32 bytes..");
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"il-run", bad}, std::vector<std::string>{"il"}}) {
        const auto driver = run(With::driver, KCACHE_TEST_PROBE_PATH, args);
        const auto layer = run(With::layer, KCACHE_TEST_PROBE_PATH, args);
        ASSERT_EQ(driver.exit_code, 0) << driver.err;
        EXPECT_EQ(layer.exit_code, 0) << layer.err;
        EXPECT_NE(driver.out.find("=" + std::to_string(CL_INVALID_VALUE) + "\n"), std::string::npos)
            << driver.out;
        EXPECT_EQ(layer.out, driver.out) << layer.err;
        const auto lines = trace_lines(layer.err);
        ASSERT_EQ(lines.size(), 1u) << layer.err;
        EXPECT_EQ(lines[0].rfind("PASS driver - ", 0), 0u) << lines[0];
        EXPECT_NE(lines[0].find("clCreateProgramWithIL: the driver refused the module, error -30"),
                  std::string::npos)
            << lines[0];
    }
}

}  // namespace
}  // namespace kcache::test
