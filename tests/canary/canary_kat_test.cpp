// A caller's own known-answer test (a KAT file beside a warm manifest entry,
// examples/kat/), run by `kcache warm` on the binary it stored, on PoCL: it
// passes on a sound driver, catches a driver that miscompiles the caller's
// kernel (the test layer), and a bad or missing KAT file is a clear error.

#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "canary_support.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

const std::filesystem::path kExample = KCACHE_KAT_EXAMPLE_DIR;

class CallerKat : public FaultLayerTest {
  protected:
    // `kcache warm --manifest` of the example's kernel with `kat` as its KAT
    // file (copied beside a copy of the manifest), under `faults`.
    compiler::RunResult warm(const std::string& kat_text, std::vector<std::string> faults = {}) {
        std::filesystem::copy_file(kExample / "saxpy.cl", dir() / "saxpy.cl");
        std::ofstream(dir() / "saxpy.kat.json") << kat_text;
        std::ofstream(dir() / "manifest.json")
            << R"({"kernels": [{"name": "my_saxpy", "sources": ["saxpy.cl"],)"
            << R"( "kat": "saxpy.kat.json"}]})";
        compiler::SpawnSpec spec;
        spec.program = KCACHE_CLI_PATH;
        spec.args = {"warm", "--manifest", (dir() / "manifest.json").string()};
        spec.env_overrides = std::move(faults);
        spec.env_overrides.push_back("KCACHE_DIR=" + (dir() / "store").string());
        spec.env_overrides.push_back("KCACHE_CANARY=off");
        return compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(120));
    }

    static std::string example_kat() {
        return *read_regular_file(kExample / "saxpy.kat.json", 1u << 20);
    }
};

TEST_F(CallerKat, TheExamplesKnownAnswerTestPassesOnASoundDriver) {
    const auto r = warm(example_kat());
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("1 built"), std::string::npos) << r.out << r.err;
}

TEST_F(CallerKat, ADriverThatMiscompilesTheCallersKernelFailsItsTest) {
    const auto r =
        warm(example_kat(), {"KCACHE_FAULT_MATCH=my_saxpy", "KCACHE_FAULT_SOURCE_FROM=a * x[i]",
                             "KCACHE_FAULT_SOURCE_TO=a + x[i]"});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("known-answer test saxpy.kat.json failed (result): args[2]["),
              std::string::npos)
        << r.err;
}

TEST_F(CallerKat, AWrongExpectedValueIsCaughtAndTheToleranceApplies) {
    nlohmann::json kat = nlohmann::json::parse(example_kat());
    kat["args"][2]["expected"][5] = kat["args"][2]["expected"][5].get<double>() + 1e-3;
    EXPECT_EQ(warm(kat.dump()).exit_code, 1);
    std::filesystem::remove_all(dir() / "store");
    std::filesystem::remove(dir() / "saxpy.cl");
    kat["tolerance"]["abs"] = 2e-3;
    const auto r = warm(kat.dump());
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(CallerKat, ABadKatFileIsAClearErrorNamingTheField) {
    nlohmann::json kat = nlohmann::json::parse(example_kat());
    kat["args"][1]["colour"] = "red";
    const auto r = warm(kat.dump());
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("not run (kat_file)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("kat.args[1]: unknown key 'colour'"), std::string::npos) << r.err;
}

TEST_F(CallerKat, AMissingKatFileIsAMissingManifestInput) {
    std::filesystem::copy_file(kExample / "saxpy.cl", dir() / "saxpy.cl");
    std::ofstream(dir() / "manifest.json")
        << R"({"kernels": [{"name": "k", "sources": ["saxpy.cl"], "kat": "none.json"}]})";
    compiler::SpawnSpec spec;
    spec.program = KCACHE_CLI_PATH;
    spec.args = {"warm", "--manifest", (dir() / "manifest.json").string()};
    spec.env_overrides = {"KCACHE_DIR=" + (dir() / "store").string(), "KCACHE_CANARY=off"};
    const auto r = compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(60));
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("no KAT file"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kcache::test
