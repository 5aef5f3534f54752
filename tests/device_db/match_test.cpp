// DeviceDb::match: exact PCI id, then IP version, then vendor (CLBlast-style fallback).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "device_fixtures.hpp"
#include "kcache/device_db/database.hpp"

namespace kcache::device_db {
namespace {

class DeviceDbBuiltin : public test::BuiltinDbTest {};

TEST_F(DeviceDbBuiltin, MatchesTheA770ByPciId) {
    DeviceMatch m = db_.match(0x8086, 0x56a0);
    ASSERT_EQ(m.level, MatchLevel::pci_id);
    EXPECT_EQ(m.device->product, "Intel(R) Arc(TM) A770 Graphics");
    ASSERT_NE(m.family, nullptr);
    EXPECT_EQ(m.family->ocloc_target, "acm-g10");
    EXPECT_EQ(m.family->kind, GpuKind::discrete);
    EXPECT_EQ(m.family->aot, AotList::not_listed);
    EXPECT_EQ(m.vendor->name, "Intel");
}

TEST_F(DeviceDbBuiltin, MeteorLake7d55IsListedButUnsupportedByThisOcloc) {
    DeviceMatch m = db_.match(test::intel_gpu(0x7d55, "23.17.26241.33"));
    ASSERT_EQ(m.level, MatchLevel::pci_id);
    EXPECT_EQ(m.family->codename, "Meteor Lake-H");
    EXPECT_EQ(m.family->ocloc, OclocSupport::unsupported);
    EXPECT_EQ(m.family->aot, AotList::listed);
    EXPECT_EQ(m.family->kind, GpuKind::integrated);
}

// The families no ocloc here targets prefer SPIR-V; those it targets do not.
TEST_F(DeviceDbBuiltin, TheFamiliesThisOclocCannotTargetPreferIl) {
    std::vector<std::string> preferring;
    for (const auto& [name, family] : db_.families()) {
        if (family.prefer_il) {
            preferring.push_back(name);
            EXPECT_EQ(family.ocloc, OclocSupport::unsupported) << name;
        }
    }
    EXPECT_EQ(preferring, (std::vector<std::string>{"arl-h", "arl-s", "lnl", "mtl-h", "mtl-u"}));
    EXPECT_TRUE(db_.match(test::intel_gpu(0x7d55, "23.17.26241.33")).family->prefer_il);
    EXPECT_FALSE(db_.match(test::intel_gpu(0x9a49, "23.17.26241.33")).family->prefer_il);
}

TEST_F(DeviceDbBuiltin, UnknownPciIdFallsBackToTheIpVersion) {
    // An unlisted id with DG2-G10's IP at another stepping still names the family.
    auto ip = IpVersion::parse("12.55.1");
    DeviceMatch m = db_.match(test::intel_gpu(0x56ff, "", ip->encode()));
    ASSERT_EQ(m.level, MatchLevel::ip_version);
    EXPECT_EQ(m.device, nullptr);
    EXPECT_EQ(m.family->name, "acm-g10");
}

TEST_F(DeviceDbBuiltin, ExactIpVersionWinsOverSameMajorMinor) {
    DeviceMatch m = db_.match(test::intel_gpu(std::nullopt, "", 0x03118004u));  // 12.70.4
    ASSERT_EQ(m.level, MatchLevel::ip_version);
    EXPECT_EQ(m.family->ip_version.to_string(), "12.70.4");
}

TEST_F(DeviceDbBuiltin, UnknownIntelDeviceFallsBackToTheVendor) {
    DeviceMatch m = db_.match(test::intel_gpu(0x1234, "1.0"));
    EXPECT_EQ(m.level, MatchLevel::vendor);
    EXPECT_EQ(m.family, nullptr);
    EXPECT_EQ(m.vendor->name, "Intel");
}

TEST_F(DeviceDbBuiltin, UnknownVendorMatchesNothing) {
    EXPECT_EQ(db_.match(0xabcd, 0x56a0).level, MatchLevel::none);
}

TEST_F(DeviceDbBuiltin, CpuDevicesNeverMatchGpuRecords) {
    // PoCL's CPU device may report vendor 0x8086; it must not look like an Intel GPU.
    DeviceIdentity cpu = test::intel_gpu(0x56a0, "3.1");
    cpu.type = DeviceType::cpu;
    EXPECT_EQ(db_.match(cpu).level, MatchLevel::none);
}

TEST_F(DeviceDbBuiltin, DefaultAotListHoldsTheIntegratedGpus) {
    std::vector<std::string> names;
    for (const FamilyRecord* f : db_.aot_families()) {
        EXPECT_EQ(f->kind, GpuKind::integrated) << f->name;
        names.push_back(f->name);
    }
    for (const char* expected : {"skl", "kbl", "cfl", "icllp", "tgllp", "rkl", "adl-s", "adl-p",
                                 "adl-n", "rpl-s", "rpl-p", "mtl-u", "mtl-h"}) {
        EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
    }
}

TEST_F(DeviceDbBuiltin, EveryDeviceNamesAFamilyOfTheRightVendor) {
    EXPECT_GT(db_.device_count(), 100u);
    for (std::uint32_t id :
         {0x1912u, 0x5912u, 0x3e92u, 0x8a52u, 0x9a49u, 0x4c8au, 0x4680u, 0x46a6u, 0x46d0u, 0xa780u,
          0xa7a0u, 0x4905u, 0x56a5u, 0x7d45u, 0x7d67u, 0x7d51u, 0x64a0u, 0xe20bu}) {
        DeviceMatch m = db_.match(0x8086, id);
        EXPECT_EQ(m.level, MatchLevel::pci_id) << hex_id(id);
        EXPECT_NE(m.family, nullptr) << hex_id(id);
    }
}

}  // namespace
}  // namespace kcache::device_db
