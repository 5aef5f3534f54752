// CLI tests with the real ocloc: prebuild writes a pack and records the
// families the installed ocloc cannot target (Meteor Lake, 0x7d55).

#include <gtest/gtest.h>

#include "cli_runner.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

using CliOcloc = CliTest;

TEST_F(CliOcloc, PrebuildWritesAPackAndRecordsTheMeteorLakeGap) {
    const auto pack = dir() / "igpu.pack";
    const CliRun r = kcache({"prebuild", "--output", pack.string(), "--targets", "tgllp,mtl-h",
                             "--kernels", "dot", "--dtypes", "f32", "--jobs", "2"});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("NOT COVERED: mtl-h"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("0x7d55"), std::string::npos) << r.out;
    const CliRun ls = kcache({"ls", "--json", "--pack", pack.string()});
    ASSERT_EQ(ls.code, 0) << ls.err;
    ASSERT_FALSE(ls.json().empty());
    for (const auto& e : ls.json()) {
        EXPECT_EQ(e["device"], "aot:tgllp");
        EXPECT_EQ(e["origin"], "aot");
    }
    EXPECT_EQ(raw_sql(pack, "SELECT status FROM kcache_aot_coverage WHERE family = 'mtl-h'"),
              "not_targetable");
    EXPECT_NE(raw_sql(pack, "SELECT pci_ids FROM kcache_aot_coverage WHERE family = 'mtl-h'")
                  .find("0x7d55"),
              std::string::npos);
    EXPECT_EQ(raw_sql(pack, "SELECT status FROM kcache_aot_coverage WHERE family = 'tgllp'"),
              "covered");
    EXPECT_EQ(kcache({"verify", "--pack", pack.string()}).code, 0);
}

TEST_F(CliOcloc, PrebuildRejectsUnknownTargetsAndKernels) {
    const auto pack = (dir() / "p.pack").string();
    EXPECT_EQ(kcache({"prebuild", "--output", pack, "--targets", "voodoo3"}).code, 3);
    EXPECT_EQ(kcache({"prebuild", "--output", pack, "--kernels", "matmul"}).code, 3);
    EXPECT_EQ(kcache({"prebuild", "--output", pack, "--dtypes", "f128"}).code, 3);
    EXPECT_EQ(kcache({"prebuild"}).code, 2);
    EXPECT_FALSE(std::filesystem::exists(pack));
}

}  // namespace
}  // namespace kcache::test
