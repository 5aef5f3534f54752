// Override files layered over the built-in data (Config::device_db, KCACHE_DEVICE_DB).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "device_fixtures.hpp"
#include "kcache/device_db/database.hpp"
#include "temp_dir.hpp"

namespace kcache::device_db {
namespace {

class DeviceDbOverride : public kcache::test::TempDirTest {
  protected:
    std::filesystem::path write(const std::string& name, const std::string& text) {
        const auto path = dir() / name;
        std::ofstream(path) << text;
        return path;
    }
};

const char* const kOverride = R"({
  "schema": 1,
  "families": [
    {"name": "mtl-h", "codename": "Meteor Lake-H", "generation": "Xe-LPG", "architecture": "xe-lpg", "ip_version": "12.71.4", "ocloc_target": "mtl-h", "ocloc": "supported", "kind": "integrated", "aot_default": true, "notes": "site has a newer ocloc"}
  ],
  "devices": [
    {"pci_id": "0x7dff", "product": "Lab sample", "family": "mtl-h"}
  ],
  "quirks": [
    {"id": "meteor-lake-slow-first-jit", "match": {"families": ["mtl-h"]}, "jit_timeout_ms": 1000},
    {"id": "site-deny-a770", "match": {"pci_ids": ["0x56a0"]}, "actions": ["deny"]}
  ]
}
)";

TEST_F(DeviceDbOverride, OverrideReplacesAndAddsRecords) {
    auto db = DeviceDb::with_override(write("site.json", kOverride));
    ASSERT_TRUE(db.ok()) << db.error().message;

    const FamilyRecord* mtl = db->family("mtl-h");
    ASSERT_NE(mtl, nullptr);
    EXPECT_EQ(mtl->ocloc, OclocSupport::supported);
    EXPECT_EQ(mtl->origin.line, 4);

    DeviceMatch added = db->match(0x8086, 0x7dff);
    ASSERT_EQ(added.level, MatchLevel::pci_id);
    EXPECT_EQ(added.device->product, "Lab sample");
    EXPECT_EQ(db->match(0x8086, 0x7d55).family, mtl);  // built-in device, replaced family

    EXPECT_EQ(db->quirks_for(test::intel_gpu(0x7d55, "1.0")).jit_timeout_ms, 1000u);
    EXPECT_TRUE(db->quirks_for(test::intel_gpu(0x56a0, "1.0")).deny);
    EXPECT_NE(db->family("tgllp"), nullptr);  // untouched built-in record

    auto builtin = DeviceDb::builtin();
    ASSERT_TRUE(builtin.ok());
    EXPECT_EQ(db->device_count(), builtin->device_count() + 1);
    EXPECT_EQ(db->quirks().size(), builtin->quirks().size() + 1);
}

TEST_F(DeviceDbOverride, UnknownFamilyInOverrideIsALocatedError) {
    const auto path = write("bad.json",
                            "{\"schema\": 1,\n\"devices\": [\n"
                            "{\"pci_id\": \"0x1\", \"product\": \"p\", \"family\": \"nope\"}]}\n");
    auto db = DeviceDb::with_override(path);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.error().code, DeviceDbErrc::unknown_reference);
    EXPECT_EQ(db.error().message,
              path.string() + ":3: device 0x0001 names unknown family \"nope\"");
}

const char* const kNamedCpu = R"({
  "schema": 1,
  "families": [
    {"name": "site-cpu", "codename": "Site CPU", "generation": "cpu", "architecture": "x86-64", "ip_version": "0.0.1", "ocloc_target": "site-cpu", "ocloc": "unsupported", "kind": "integrated", "aot_default": false}
  ],
  "devices": [
    {"vendor": "0x10006", "name": "cpu-haswell-AMD EPYC", "product": "PoCL host CPU", "family": "site-cpu"}
  ],
  "quirks": [
    {"id": "site-cpu-verify", "match": {"families": ["site-cpu"]}, "actions": ["verify_before_use"]}
  ]
}
)";

TEST_F(DeviceDbOverride, NamedRecordGivesANonGpuDeviceAFamily) {
    auto db = DeviceDb::with_override(write("cpu.json", kNamedCpu));
    ASSERT_TRUE(db.ok()) << db.error().message;
    DeviceIdentity cpu;
    cpu.type = DeviceType::cpu;
    cpu.vendor_id = 0x10006;
    cpu.name = "cpu-haswell-AMD EPYC";
    DeviceMatch m = db->match(cpu);
    ASSERT_EQ(m.level, MatchLevel::name);
    ASSERT_NE(m.family, nullptr);
    EXPECT_EQ(m.family->ocloc_target, "site-cpu");
    EXPECT_EQ(m.device->product, "PoCL host CPU");
    EXPECT_TRUE(db->quirks_for(cpu).verify_before_use);

    DeviceIdentity other = cpu;  // the name must match exactly, and the vendor too
    other.name = "cpu-haswell-AMD EPYC 7B13";
    EXPECT_EQ(db->match(other).level, MatchLevel::none);
    other = cpu;
    other.vendor_id = 0x8086;
    EXPECT_EQ(db->match(other).level, MatchLevel::none);
    EXPECT_FALSE(db->quirks_for(other).verify_before_use);
}

TEST_F(DeviceDbOverride, DeviceNeedsExactlyOneOfPciIdAndName) {
    for (const char* device :
         {R"({"product": "p", "family": "tgllp"})",
          R"({"pci_id": "0x1", "name": "n", "product": "p", "family": "tgllp"})",
          R"({"name": "", "product": "p", "family": "tgllp"})"}) {
        const auto path =
            write("bad.json", std::string("{\"schema\": 1,\n\"devices\": [\n") + device + "]}\n");
        auto db = DeviceDb::with_override(path);
        ASSERT_FALSE(db.ok()) << device;
        EXPECT_NE(db.error().message.find(path.string() + ":3:"), std::string::npos)
            << db.error().message;
    }
}

TEST_F(DeviceDbOverride, FailedLayerLeavesTheDatabaseUnchanged) {
    auto db = DeviceDb::builtin();
    ASSERT_TRUE(db.ok());
    DataFile bad{"x.json", {}, {}, {DeviceRecord{0x8086, 0x1, "", "p", "nope", {"x.json", 2}}}, {}};
    bad.quirks.push_back(QuirkRule{});
    bad.quirks.back().id = "q";
    bad.quirks.back().codenames = {"Atlantis"};
    auto status = db->add_layer(bad);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().diagnostics.size(), 2u) << status.error().message;
    EXPECT_EQ(db->match(0x8086, 0x1).level, MatchLevel::vendor);
}

// The override comes from the caller (Config::device_db): an empty path is the
// built-in data, and KCACHE_DEVICE_DB in the environment changes nothing here.
TEST_F(DeviceDbOverride, EmptyPathIsTheBuiltInDataWhateverTheEnvironmentSays) {
    const auto path = write("env.json", kOverride);
    ::setenv("KCACHE_DEVICE_DB", path.c_str(), 1);
    auto without = DeviceDb::with_override({});
    auto with = DeviceDb::with_override(path);
    ::unsetenv("KCACHE_DEVICE_DB");
    ASSERT_TRUE(without.ok()) << without.error().message;
    ASSERT_TRUE(with.ok()) << with.error().message;
    EXPECT_EQ(without->match(0x8086, 0x7dff).level, MatchLevel::vendor);
    EXPECT_EQ(with->match(0x8086, 0x7dff).level, MatchLevel::pci_id);
}

TEST_F(DeviceDbOverride, MissingOverrideFileIsAnIoError) {
    auto db = DeviceDb::with_override(dir() / "absent.json");
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.error().code, DeviceDbErrc::io);
}

}  // namespace
}  // namespace kcache::device_db
