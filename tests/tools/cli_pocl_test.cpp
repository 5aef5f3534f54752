// CLI tests on PoCL, a real OpenCL driver: device listing through the probe
// child and the doctor's report.

#include <gtest/gtest.h>

#include <fstream>

#include "cli_runner.hpp"
#include "il_support.hpp"

namespace kcache::test {
namespace {

using CliDevice = CliTest;

TEST_F(CliDevice, DevicesListsPoclWithJitCoverage) {
    const CliRun r = kcache({"devices", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = r.json();
    ASSERT_TRUE(j["opencl"].is_array());
    bool pocl = false;
    for (const auto& d : j["opencl"]) {
        if (d["identity"]["platform_name"] == "Portable Computing Language") {
            pocl = true;
            EXPECT_EQ(d["identity"]["type"], "cpu");
            EXPECT_EQ(d["match"]["level"], "none");
            EXPECT_EQ(d["coverage"]["mode"], "jit");
        }
    }
    EXPECT_TRUE(pocl) << r.out;
    EXPECT_TRUE(j["sysfs"].is_array());
    const CliRun text = kcache({"devices"});
    EXPECT_EQ(text.code, 0);
    EXPECT_NE(text.out.find("OpenCL devices (1"), std::string::npos) << text.out;
}

TEST_F(CliDevice, DevicesReportsAProbeThatCannotFinish) {
    // A probe bound far below PoCL's start-up time: killed by the watchdog.
    const CliRun r = kcache({"devices", "--json", "--timeout", "1ms"});
    EXPECT_EQ(r.code, 5) << r.out;
    EXPECT_TRUE(r.json().contains("probe_error"));
}

TEST_F(CliDevice, DoctorShowsWhereTheStoreComesFrom) {
    const CliRun r = kcache({"doctor", "--json"});
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    bool store_dir = false;
    bool icd = false;
    for (const auto& f : r.json()) {
        if (f["name"] == "dir") {
            store_dir = true;
            EXPECT_NE(f["value"].get<std::string>().find("[environment]"), std::string::npos);
        }
        icd = icd || f["name"].get<std::string>().rfind("icd ", 0) == 0;
    }
    EXPECT_TRUE(store_dir);
    EXPECT_TRUE(icd);
}

TEST_F(CliDevice, DoctorFlagsAStoreOthersCanWrite) {
    std::filesystem::create_directories(store_dir());
    std::filesystem::permissions(store_dir(), std::filesystem::perms::all);
    const CliRun r = kcache({"doctor"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("PROBLEM store.directory"), std::string::npos) << r.out;
}

// Warming a subset twice: the first run builds, the second finds everything
// (idempotent); explain then reports the hit, and a field diff for a miss.
TEST_F(CliDevice, WarmTwiceBuildsOnceAndExplainSeesTheEntries) {
    const std::vector<std::string> subset = {"warm", "--kernels", "dot", "--dtypes",
                                             "f32",  "--jobs",    "2",   "--json"};
    const CliRun first = kcache(subset);
    ASSERT_EQ(first.code, 0) << first.err;
    const auto built = first.json();
    EXPECT_EQ(built["built"], 2) << first.out;
    EXPECT_EQ(built["failed"], 0);
    EXPECT_NE(first.err.find("built dot:dtype=f32"), std::string::npos) << first.err;
    const CliRun second = kcache(subset);
    ASSERT_EQ(second.code, 0) << second.err;
    EXPECT_EQ(second.json()["built"], 0);
    EXPECT_EQ(second.json()["already_cached"], 2);
    const auto entries = kcache({"ls", "--json", "--origin", "jit"}).json();
    ASSERT_EQ(entries.size(), 2u);
    const std::string variant = entries[0]["kernel"];
    const CliRun hit = kcache({"explain", variant, "--json"});
    ASSERT_EQ(hit.code, 0) << hit.err;
    EXPECT_EQ(hit.json()[0]["state"], "hit");
    const CliRun miss = kcache({"explain", "dot:dtype=f16", "--json", "--limit", "1"});
    ASSERT_EQ(miss.code, 0) << miss.err;
    const auto explained = miss.json();
    const auto& nearest = explained[0]["nearest"];
    ASSERT_EQ(nearest.size(), 1u) << miss.out;
    EXPECT_EQ(nearest[0]["differs"][0]["field"], "build_options");
    const CliRun verified = kcache({"verify", "--run", "--json"});
    ASSERT_EQ(verified.code, 0) << verified.out << verified.err;
    for (const auto& e : verified.json()) {
        EXPECT_EQ(e["state"], "kat_passed") << verified.out;
    }
    EXPECT_EQ(kcache({"ls", "--json", "--verified", "passed"}).json().size(), 2u);
    EXPECT_EQ(kcache({"verify", "--run", "--pack", "x.kcpack"}).code, 2);
    const CliRun text = kcache({"warm", "--kernels", "dot", "--dtypes", "f32"});
    EXPECT_NE(text.out.find("warm: 0 built, 2 already cached, 0 unsupported, 0 failed"),
              std::string::npos)
        << text.out;
}

// The SPIR-V entries warm stores are for devices that load IL only: on
// Debian's PoCL (no IL) it stores none and says nothing of SPIR-V.
TEST_F(CliDevice, WarmOnADeviceWithoutIlStoresNoSpirv) {
    ASSERT_EQ(test_device_il_version(), "") << "this test is about a driver without IL";
    const std::vector<std::string> subset = {"warm", "--kernels", "dot", "--dtypes", "f32"};
    std::vector<std::string> as_json = subset;
    as_json.insert(as_json.end(), {"--json", "--quiet"});
    const CliRun first = kcache(as_json);
    ASSERT_EQ(first.code, 0) << first.out << first.err;
    EXPECT_EQ(first.json()["built"], 2) << first.out;
    EXPECT_FALSE(first.json().contains("spirv")) << first.out;
    EXPECT_EQ(first.err.find("SPIR-V"), std::string::npos) << first.err;
    const CliRun text = kcache(subset);
    ASSERT_EQ(text.code, 0) << text.out << text.err;
    EXPECT_EQ(text.out.find("spir-v"), std::string::npos) << text.out;
    const auto entries = kcache({"ls", "--json"}).json();
    ASSERT_EQ(entries.size(), 2u) << entries.dump();
    for (const auto& e : entries) {
        const std::string format = e["fields"]["target_format"];
        EXPECT_NE(format.rfind("spirv:", 0), 0u) << format;
    }
}

TEST_F(CliDevice, WarmAndExplainRejectBadInput) {
    EXPECT_EQ(kcache({"warm", "--device", "no-such-device"}).code, 3);
    EXPECT_EQ(kcache({"warm", "--kernels", "matmul"}).code, 3);
    EXPECT_EQ(kcache({"warm", "--dtypes", "f8"}).code, 3);
    EXPECT_EQ(kcache({"warm", "--jobs", "0"}).code, 2);
    EXPECT_EQ(kcache({"warm", "--manifest", "m.json", "--kernels", "dot"}).code, 2);
    EXPECT_EQ(kcache({"warm", "--manifest", (dir() / "absent.json").string()}).code, 3);
    EXPECT_EQ(kcache({"explain", "matmul"}).code, 3);
    EXPECT_EQ(kcache({"explain", "dot", "--device", "no-such-device"}).code, 3);
    EXPECT_EQ(kcache({"explain", "dot:dtype"}).code, 2);
}

TEST_F(CliDevice, WarmManifestBuildsTheLibrarysOwnKernels) {
    std::ofstream(dir() / "scale.cl")
        << "__kernel void scale(__global float* x, float a) { x[get_global_id(0)] *= a; }\n";
    const auto manifest = dir() / "manifest.json";
    std::ofstream(manifest) << R"({"kernels": [{"name": "scale", "sources": ["scale.cl"],
        "entry_points": ["scale"], "options": "-cl-std=CL1.2",
        "variants": [{"name": "plain"},
                     {"name": "exotic", "extensions": ["cl_vendor_not_a_real_extension"]}]}]})";
    const CliRun first = kcache({"warm", "--manifest", manifest.string(), "--json"});
    ASSERT_EQ(first.code, 0) << first.err;
    EXPECT_EQ(first.json()["built"], 1) << first.out;
    EXPECT_EQ(first.json()["unsupported"], 1);
    const CliRun second = kcache({"warm", "--manifest", manifest.string(), "--json"});
    EXPECT_EQ(second.json()["already_cached"], 1) << second.out;
    EXPECT_EQ(second.json()["built"], 0);

    std::ofstream(dir() / "bad.json") << R"({"kernels": [{"name": "x", "sourcez": []}]})";
    const CliRun bad = kcache({"warm", "--manifest", (dir() / "bad.json").string()});
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("unknown key 'sourcez'"), std::string::npos) << bad.err;
    std::ofstream(dir() / "lost.json") << R"({"kernels": [{"name": "x", "sources": ["no.cl"]}]})";
    EXPECT_EQ(kcache({"warm", "--manifest", (dir() / "lost.json").string()}).code, 3);
    std::ofstream(dir() / "broken.cl") << "__kernel void broken( { }\n";
    std::ofstream(dir() / "broken.json")
        << R"({"kernels": [{"name": "broken", "sources": ["broken.cl"]}]})";
    const CliRun failed = kcache({"warm", "--manifest", (dir() / "broken.json").string()});
    EXPECT_EQ(failed.code, 1) << failed.out << failed.err;
    EXPECT_NE(failed.out.find("1 failed"), std::string::npos) << failed.out;
}

}  // namespace
}  // namespace kcache::test
