// CLI tests on PoCL, a real OpenCL driver: device listing through the probe
// child and the doctor's report.

#include <gtest/gtest.h>

#include "cli_runner.hpp"

namespace kcache::test {
namespace {

using CliPocl = CliTest;

TEST_F(CliPocl, DevicesListsPoclWithJitCoverage) {
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

TEST_F(CliPocl, DevicesReportsAProbeThatCannotFinish) {
    // A probe bound far below PoCL's start-up time: killed by the watchdog.
    const CliRun r = kcache({"devices", "--json", "--timeout", "1ms"});
    EXPECT_EQ(r.code, 5) << r.out;
    EXPECT_TRUE(r.json().contains("probe_error"));
}

TEST_F(CliPocl, DoctorShowsWhereTheStoreComesFrom) {
    const CliRun r = kcache({"doctor", "--json"});
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    bool store_dir = false;
    bool icd = false;
    for (const auto& f : r.json()) {
        if (f["name"] == "store_dir") {
            store_dir = true;
            EXPECT_NE(f["value"].get<std::string>().find("[environment KCACHE_DIR]"),
                      std::string::npos);
        }
        icd = icd || f["name"].get<std::string>().rfind("icd ", 0) == 0;
    }
    EXPECT_TRUE(store_dir);
    EXPECT_TRUE(icd);
}

TEST_F(CliPocl, DoctorFlagsAStoreOthersCanWrite) {
    std::filesystem::create_directories(store_dir());
    std::filesystem::permissions(store_dir(), std::filesystem::perms::all);
    const CliRun r = kcache({"doctor"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("PROBLEM store.directory"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kcache::test
