// Driver and IP versions compare as numbers, component by component.
#include <gtest/gtest.h>

#include "kcache/device_db/version.hpp"

namespace kcache::device_db {
namespace {

DriverVersion v(const char* text) {
    auto parsed = DriverVersion::parse(text);
    EXPECT_TRUE(parsed.has_value()) << text;
    return parsed.value_or(DriverVersion{});
}

TEST(DeviceDb, DriverVersionsCompareNumericallyNotAsStrings) {
    EXPECT_LT(v("24.9.28717.12"), v("24.13.29138.7"));  // "24.9" > "24.13" as strings
    EXPECT_LT(v("1.3.9999"), v("1.3.26241"));
    EXPECT_GT(v("23.17.26241.33"), v("23.17.26241.4"));
    EXPECT_EQ(v("1.2"), v("1.2.0"));
    EXPECT_LT(v("1.2"), v("1.2.0.1"));
}

TEST(DeviceDb, DriverVersionRejectsMalformedText) {
    for (const char* bad : {"", "1.", ".1", "1..2", "a.1", "1.2-rc", "-1", "+1", " 1"}) {
        EXPECT_FALSE(DriverVersion::parse(bad).has_value()) << bad;
    }
}

TEST(DeviceDb, DriverVersionPrefixReadsFreeFormDriverStrings) {
    auto pocl = DriverVersion::parse_prefix("3.1+debian");
    ASSERT_TRUE(pocl.has_value());
    EXPECT_EQ(pocl->to_string(), "3.1");
    EXPECT_FALSE(DriverVersion::parse_prefix("unknown").has_value());
}

TEST(DeviceDb, VersionRangeBoundsAreInclusive) {
    VersionRange r{v("23.52.28202.14"), v("24.13.29138.7")};
    EXPECT_TRUE(r.contains(v("23.52.28202.14")));
    EXPECT_TRUE(r.contains(v("24.13.29138.7")));
    EXPECT_FALSE(r.contains(v("23.52.28202.13")));
    EXPECT_FALSE(r.contains(v("24.13.29138.8")));
    EXPECT_TRUE((VersionRange{std::nullopt, v("2")}.contains(v("0.1"))));
}

TEST(DeviceDb, IpVersionUsesTheIntelRuntimeEncoding) {
    auto ip = IpVersion::parse("12.70.4");
    ASSERT_TRUE(ip.has_value());
    EXPECT_EQ(ip->encode(), 0x03118004u);  // compute-runtime's MTL_U_B0
    EXPECT_EQ(IpVersion::decode(0x05004000u).to_string(), "20.1.0");
    EXPECT_FALSE(IpVersion::parse("12.70").has_value());
    EXPECT_FALSE(IpVersion::parse("12.300.0").has_value());
}

}  // namespace
}  // namespace kcache::device_db
