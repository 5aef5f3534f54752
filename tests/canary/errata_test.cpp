// The errata feed without a device: the document's grammar (every field
// checked), which driver and variant an erratum covers, signed files (a
// tampered one refused), the errata a pack carries, and the node's file.

#include <gtest/gtest.h>

#include <fstream>

#include "kcache/canary/errata.hpp"
#include "kcache/store/pack.hpp"
#include "kcache/store/pack_errata.hpp"
#include "kcache/store/store.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

namespace ks = kcache::store;

errata::Erratum dot_erratum(std::string min, std::string max) {
    errata::Erratum e;
    e.vendor_id = 0x10006;
    e.vendor = "The pocl project";
    e.kernel = "dot";
    e.driver_min = std::move(min);
    e.driver_max = std::move(max);
    e.check = "result";
    e.evidence = "partial sums subtracted";
    return e;
}

canary::DriverIdentity driver(std::string version, std::uint32_t device_id = 0) {
    return {0x10006, "The pocl project", device_id, "pthread",
            "PoCL",  std::move(version), "jit:x:"};
}

kernels::Variant variant(const std::string& kernel,
                         std::map<std::string, std::string> params = {}) {
    kernels::Params p(params.begin(), params.end());
    auto v = kernels::make_variant(kernel, p);
    EXPECT_TRUE(v) << kernel;
    return *v;
}

TEST(Errata, DriverVersionsCompareByTheirNumbers) {
    EXPECT_LT(errata::compare_versions("3.9", "3.10"), 0);
    EXPECT_EQ(errata::compare_versions("23.52.028", "23.52.28"), 0);
    EXPECT_GT(errata::compare_versions("535.104.05", "535.86.10"), 0);
    EXPECT_LT(errata::compare_versions("3.1", "3.1+debian"), 0);  // a prefix is the smaller
    EXPECT_LT(errata::compare_versions("3.1+debian", "3.2"), 0);
}

TEST(Errata, AnErratumCoversItsDriverRangeDevicesAndKernelOnly) {
    const errata::Erratum e = dot_erratum("3.0", "3.9");
    EXPECT_TRUE(e.covers(driver("3.1+debian"), variant("dot")));
    EXPECT_TRUE(e.covers(driver("3.9"), variant("dot", {{"ls", "64"}})));  // every variant
    EXPECT_FALSE(e.covers(driver("4.0"), variant("dot")));
    EXPECT_FALSE(e.covers(driver("2.9"), variant("dot")));
    EXPECT_FALSE(e.covers(driver("3.1"), variant("conv2d")));
    canary::DriverIdentity other_vendor = driver("3.1");
    other_vendor.vendor_id = 0x8086;
    EXPECT_FALSE(e.covers(other_vendor, variant("dot")));

    errata::Erratum one = e;
    one.device_ids = {0x56a0};
    one.variant = variant("dot", {{"ls", "64"}}).id();
    EXPECT_TRUE(one.covers(driver("3.1", 0x56a0), variant("dot", {{"ls", "64"}})));
    EXPECT_FALSE(one.covers(driver("3.1", 0x56a0), variant("dot")));  // another variant
    EXPECT_FALSE(one.covers(driver("3.1", 0x56a1), variant("dot", {{"ls", "64"}})));
}

TEST(Errata, TheDocumentRoundTripsAndEveryFieldIsChecked) {
    errata::Erratum e = dot_erratum("3.0", "");
    e.device_ids = {1, 2};
    auto back = errata::from_json(errata::to_json({e, dot_erratum("", "2.0")}));
    ASSERT_TRUE(back) << back.error().message;
    ASSERT_EQ(back->size(), 2u);
    EXPECT_EQ((*back)[0].id(), e.id());
    EXPECT_EQ((*back)[0].evidence, e.evidence);
    EXPECT_EQ((*back)[0].device_ids, e.device_ids);

    const std::string good = errata::to_json({e});
    auto edited = [&](const std::string& from, const std::string& to) {
        std::string text = good;
        const std::size_t at = text.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        return errata::from_json(text.replace(at, from.size(), to));
    };
    auto r = edited("\"verdict\": \"suspect\"", "\"verdict\": \"validated\"");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("erratum 0: verdict \"validated\""), std::string::npos)
        << r.error().message;
    r = edited("\"kernel\": \"dot\",", "");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("missing field \"kernel\""), std::string::npos)
        << r.error().message;
    r = edited("\"vendor_id\": 65542", "\"vendor_id\": \"pocl\"");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("\"vendor_id\" has the wrong type"), std::string::npos);
    r = edited("\"variant\": \"\"", "\"variant\": \"" + variant("conv2d").id() + "\"");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("is not one of kernel \"dot\""), std::string::npos)
        << r.error().message;
    r = edited("\"format\": 1", "\"format\": 2");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, canary::CanaryErrc::damaged);
    EXPECT_FALSE(errata::from_json("{\"format\": 1, \"errata\": [}"));
    EXPECT_FALSE(errata::from_json(errata::to_json({dot_erratum("4.0", "3.0")})));

    errata::Erratum quoted = dot_erratum("3.0", "");  // a driver's text, not UTF-8
    quoted.evidence = "build log: \xff\xfe";
    EXPECT_NO_THROW(quoted.id());
    EXPECT_TRUE(errata::from_json(errata::to_json({quoted})));
}

class ErrataFiles : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        auto k = ks::generate_key();
        ASSERT_TRUE(k);
        key_ = *k;
        trusted_.add({key_.public_key(), dir() / "test.pub"});
    }
    ks::SecretKey key_;
    ks::TrustedKeys trusted_;
};

TEST_F(ErrataFiles, ASignedFileIsReadAndATamperedOneRefusedUnderEveryPolicy) {
    const auto file = dir() / "errata.json";
    ASSERT_TRUE(errata::write_file(file, {dot_erratum("3.0", "3.9")}, &key_));
    auto read = errata::read_signed_file(file, trusted_, ks::SignaturePolicy::require_trusted);
    ASSERT_TRUE(read) << read.error().message;
    ASSERT_EQ(read->errata.size(), 1u);
    EXPECT_EQ(read->signature.state, ks::SignatureState::trusted);

    std::string text;
    {
        std::ifstream in(file);
        text.assign(std::istreambuf_iterator<char>(in), {});
    }
    text.replace(text.find("3.9"), 3, "9.9");  // a wider range than was signed
    std::ofstream(file, std::ios::trunc) << text;
    for (auto policy : {ks::SignaturePolicy::report, ks::SignaturePolicy::require_trusted}) {
        auto tampered = errata::read_signed_file(file, trusted_, policy);
        ASSERT_FALSE(tampered);
        EXPECT_NE(tampered.error().message.find("refused: invalid signature"), std::string::npos)
            << tampered.error().message;
    }
}

TEST_F(ErrataFiles, AnUnsignedOrUntrustedFileIsRefusedWhenSignaturesAreRequired) {
    const auto plain = dir() / "plain.json";
    ASSERT_TRUE(errata::write_file(plain, {dot_erratum("3.0", "3.9")}, nullptr));
    EXPECT_TRUE(errata::read_signed_file(plain, trusted_, ks::SignaturePolicy::report));
    auto refused = errata::read_signed_file(plain, trusted_, ks::SignaturePolicy::require_trusted);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("unsigned"), std::string::npos)
        << refused.error().message;
    EXPECT_EQ(refused.error().code, canary::CanaryErrc::refused);

    const auto other = dir() / "other.json";
    auto stranger = ks::generate_key();
    ASSERT_TRUE(stranger);
    ASSERT_TRUE(errata::write_file(other, {dot_erratum("3.0", "3.9")}, &*stranger));
    refused = errata::read_signed_file(other, trusted_, ks::SignaturePolicy::require_trusted);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("not trusted"), std::string::npos)
        << refused.error().message;
    EXPECT_FALSE(errata::write_file(other, {}, nullptr));  // never over an existing file
}

TEST_F(ErrataFiles, APackCarriesItsErrataDocument) {
    auto store = ks::Store::open(dir() / "store");
    ASSERT_TRUE(store);
    const auto pack = dir() / "p.kcpack";
    ASSERT_TRUE(store->export_pack(pack));
    auto opened = ks::Pack::open(pack);
    ASSERT_TRUE(opened);
    EXPECT_EQ(opened->errata_document(), "");  // a pack without errata

    const std::string document = errata::to_json({dot_erratum("3.0", "3.9")});
    ASSERT_TRUE(ks::write_pack_errata(pack, document));
    ASSERT_TRUE(ks::write_pack_errata(pack, document));  // replaced, not added
    opened = ks::Pack::open(pack);
    ASSERT_TRUE(opened);
    EXPECT_EQ(opened->errata_document(), document);
    auto carried = errata::of_pack_document(pack, opened->errata_document());
    ASSERT_TRUE(carried) << carried.error().message;
    EXPECT_EQ(carried->size(), 1u);
    EXPECT_FALSE(ks::write_pack_errata(pack, ""));
    EXPECT_FALSE(ks::write_pack_errata(dir() / "missing.kcpack", document));
}

TEST_F(ErrataFiles, TheNodesFileMergesErrataById) {
    auto added = errata::add_local(dir() / "store", {dot_erratum("3.0", "3.9")}, "import a");
    ASSERT_TRUE(added) << added.error().message;
    EXPECT_EQ(*added, 1u);
    errata::Erratum again = dot_erratum("3.0", "3.9");
    again.evidence = "seen again";
    added = errata::add_local(dir() / "store", {again, dot_erratum("4.0", "4.1")}, "import b");
    ASSERT_TRUE(added) << added.error().message;
    EXPECT_EQ(*added, 2u);
    auto local = errata::load_local(dir() / "store");
    ASSERT_TRUE(local) << local.error().message;
    ASSERT_EQ(local->size(), 2u);
    EXPECT_EQ((*local)[0].evidence, "seen again");
    EXPECT_EQ((*local)[0].source, "import b");

    std::ofstream(errata::errata_dir(dir() / "store") / "errata.json", std::ios::trunc) << "{";
    auto damaged = errata::load_local(dir() / "store");
    ASSERT_FALSE(damaged);
    EXPECT_EQ(damaged.error().code, canary::CanaryErrc::damaged);
    EXPECT_FALSE(errata::add_local(dir() / "store", {dot_erratum("5.0", "")}, "x"));
}

}  // namespace
}  // namespace kcache::test
