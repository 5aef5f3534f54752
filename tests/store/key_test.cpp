// The key: every hashed field changes it, the name does not, and the
// serialization is unambiguous.

#include <functional>
#include <set>
#include <string>
#include <utility>

#include "store_fixture.hpp"

using kcache::test::sample_fields;

namespace {

struct FieldChange {
    const char* name;
    std::function<void(ks::KeyFields&)> change;
};

std::vector<FieldChange> every_field_change() {
    return {
        {"key_version", [](auto& f) { f.key_version += 1; }},
        {"source_digest", [](auto& f) { f.source_digest = kcache::sha256_hex("other source"); }},
        {"entry_points", [](auto& f) { f.entry_points.push_back("extra"); }},
        {"build_options", [](auto& f) { f.build_options += " -DX=1"; }},
        {"target_format", [](auto& f) { f.target_format = "spirv"; }},
        {"vendor_id", [](auto& f) { f.vendor_id = 0x10de; }},
        {"device_name", [](auto& f) { f.device_name += "x"; }},
        {"pci_device_id", [](auto& f) { f.pci_device_id = 0x7d45; }},
        {"ip_version", [](auto& f) { f.ip_version += 1; }},
        {"driver_version", [](auto& f) { f.driver_version = "24.1"; }},
        {"platform_name", [](auto& f) { f.platform_name = "Portable Computing Language"; }},
        {"platform_version", [](auto& f) { f.platform_version = "OpenCL 2.0"; }},
        {"opencl_c_version", [](auto& f) { f.opencl_c_version = "OpenCL C 3.0"; }},
        {"address_bits", [](auto& f) { f.address_bits = 32; }},
        {"device_uuid", [](auto& f) { f.device_uuid[0] = '9'; }},
        {"driver_uuid", [](auto& f) { f.driver_uuid[0] = '9'; }},
        {"compiler_id", [](auto& f) { f.compiler_id = "ocloc 23.35"; }},
    };
}

}  // namespace

TEST_F(Store, KeyChangesWithEverySingleField) {
    const ks::KeyFields base = sample_fields(1);
    const ks::Key base_key = ks::make_key(base);
    std::set<std::string> seen{base_key.hex()};
    for (const auto& fc : every_field_change()) {
        ks::KeyFields f = base;
        fc.change(f);
        ks::Key k = ks::make_key(f);
        EXPECT_NE(k, base_key) << fc.name;
        EXPECT_TRUE(seen.insert(k.hex()).second) << fc.name << " collides with another change";
        if (std::string(fc.name) != "key_version") {
            EXPECT_EQ(ks::differing_fields(base, f), std::vector<std::string>{fc.name});
        }
    }
    EXPECT_EQ(every_field_change().size() + 1, seen.size());
}

TEST_F(Store, KeyIgnoresKernelNameAndNormalizes) {
    ks::KeyFields a = sample_fields(2);
    ks::KeyFields b = a;
    b.kernel_name = "qconv_pointwise";  // a rename must not change the key
    b.build_options = "  -cl-fast-relaxed-math\t-DTILE=16 ";
    b.entry_points = {"conv2d_f32_tail", "conv2d_f32", "conv2d_f32"};
    b.device_uuid = "8680557D080000000002000000000000";
    EXPECT_EQ(ks::make_key(a), ks::make_key(b));
    EXPECT_TRUE(ks::differing_fields(a, b).empty());
}

TEST_F(Store, KeyConcatenationsNeverCollide) {
    ks::KeyFields a = sample_fields(3);
    ks::KeyFields b = a;
    a.entry_points = {"ab", "c"};
    b.entry_points = {"a", "bc"};
    EXPECT_NE(ks::make_key(a), ks::make_key(b));
    // Moving bytes across neighbouring string fields.
    using Field = std::string ks::KeyFields::*;
    for (auto [first, second] :
         {std::pair<Field, Field>{&ks::KeyFields::device_name, &ks::KeyFields::driver_version},
          {&ks::KeyFields::platform_name, &ks::KeyFields::platform_version}}) {
        a = b = sample_fields(3);
        a.*first = "ab";
        a.*second = "c";
        b.*first = "a";
        b.*second = "bc";
        EXPECT_NE(ks::make_key(a), ks::make_key(b));
    }
    // One entry point "a b" vs two entry points.
    a.entry_points = {"ab"};
    b.entry_points = {"a", "b"};
    EXPECT_NE(ks::serialize_key_fields(a), ks::serialize_key_fields(b));
}

TEST_F(Store, KeyHexRoundTripsAndSha256IsStandard) {
    // FIPS 180-2 test vector.
    EXPECT_EQ(kcache::sha256_hex("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ks::Key k = ks::make_key(sample_fields(4));
    ks::Key parsed;
    ASSERT_TRUE(parsed.parse_hex(k.hex()));
    EXPECT_EQ(parsed, k);
    EXPECT_FALSE(parsed.parse_hex("zz"));
    EXPECT_EQ(ks::normalize_build_options("\t -a   -b\n"), "-a -b");
}

TEST_F(Store, KeyRecordIsTheDocumentedBytesOfTheNormalizedFields) {
    // The record written out from the format in store/src/key.cpp, field by
    // field: stores and packs made by earlier builds are found by it.
    ks::KeyFields f;
    f.key_version = 7;
    f.kernel_name = "not hashed";
    f.source_digest = "ABCDEF";
    f.entry_points = {"k2", "k1", "k2"};
    f.build_options = "  -cl-fast-relaxed-math\t -DX=1 ";
    f.target_format = "native";
    f.vendor_id = 0x8086;
    f.device_name = "Dev";
    f.pci_device_id = 0x7d55;
    f.ip_version = 0x03010203;
    f.driver_version = "24.1";
    f.platform_name = "P";
    f.platform_version = "OpenCL 3.0";
    f.opencl_c_version = "OpenCL C 1.2";
    f.address_bits = 64;
    f.device_uuid = "00AbC";
    f.driver_uuid = "";
    f.compiler_id = "cc";
    std::string want = "kcache.key";
    const auto u32 = [&](std::uint32_t v) {
        for (int i = 0; i < 4; ++i)
            want.push_back(static_cast<char>(v >> (8 * i)));
    };
    const auto u64 = [&](std::uint64_t v) {
        for (int i = 0; i < 8; ++i)
            want.push_back(static_cast<char>(v >> (8 * i)));
    };
    const auto str = [&](std::string_view s) {
        u64(s.size());
        want += s;
    };
    u32(7);
    want.push_back(1), str("abcdef");
    want.push_back(2), u64(2), str("k1"), str("k2");
    want.push_back(3), str("-cl-fast-relaxed-math -DX=1");
    want.push_back(4), str("native");
    want.push_back(5), u32(0x8086);
    want.push_back(6), str("Dev");
    want.push_back(7), u32(0x7d55);
    want.push_back(8), u32(0x03010203);
    want.push_back(9), str("24.1");
    want.push_back(10), str("P");
    want.push_back(11), str("OpenCL 3.0");
    want.push_back(12), str("OpenCL C 1.2");
    want.push_back(13), u32(64);
    want.push_back(14), str("00abc");
    want.push_back(15), str("");
    want.push_back(16), str("cc");
    EXPECT_EQ(ks::serialize_key_fields(f), want);
    EXPECT_EQ(ks::make_key(f).digest, kcache::sha256(want));
}
