// The canary's verdict records: the file form, refusal of damaged or foreign
// records, and which verdict covers a variant.

#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "kcache/canary/canary.hpp"
#include "temp_dir.hpp"

namespace kcache::canary {
namespace {

class CanaryRecord : public test::TempDirTest {};

Record sample() {
    Record r{{0x10de, "NVIDIA", 0x2330, "H100", "NVIDIA CUDA", "550.1", "jit:550.1:ab"},
             42,
             1700000000,
             812,
             {{"dot:dtype=f32,arith=f32,ls=256", VerdictState::validated, "", 42, 2.5e-6, "ok",
               Differential{"549.0", "agree", 0.0, "0 of 3 values apart"}},
              {"conv2d:dtype=f32,act=none,ls=64", VerdictState::suspect, "conv2d_direct x", 42, 3.5,
               "conv2d_direct x: 12 of 432 values outside tolerance",
               Differential{"549.0", "new_wrong", 3.5, "driver 549.0's binary passed"}},
              {"batchnorm:dtype=f32,act=none,ls=256", VerdictState::not_run, "error", 42,
               std::nullopt, "cannot start kcache-verify", std::nullopt}}};
    return r;
}

TEST_F(CanaryRecord, SavedRecordReadsBackForItsIdentityOnly) {
    const Record r = sample();
    ASSERT_TRUE(save_record(dir() / "canary", r));
    auto back = load_record(dir() / "canary", r.identity);
    ASSERT_TRUE(back);
    EXPECT_EQ(to_json(*back), to_json(r));
    EXPECT_TRUE(back->suspect());
    EXPECT_EQ(back->verdicts[1].differential, r.verdicts[1].differential);
    EXPECT_FALSE(back->verdicts[2].differential);
    DriverIdentity updated = r.identity;
    updated.driver = "551.0";
    EXPECT_NE(updated.id(), r.identity.id());
    EXPECT_FALSE(load_record(dir() / "canary", updated));
    EXPECT_EQ(load_records(dir() / "canary").size(), 1u);
}

TEST_F(CanaryRecord, DamagedOrForeignRecordsAreNoVerdict) {
    const Record r = sample();
    ASSERT_TRUE(save_record(dir() / "canary", r));
    const auto path = dir() / "canary" / (r.identity.id() + ".json");
    std::string text = to_json(r);
    for (const std::string& damaged :
         {text.substr(0, text.size() / 2), std::string("[]"), std::string("{\"format\": 2}"),
          [&] {
              std::string t = text;
              t.replace(t.find("\"suspect\""), 9, "\"unknown\"");
              return t;
          }(),
          [&] {  // a differential result that does not exist
              std::string t = text;
              t.replace(t.find("\"new_wrong\""), 11, "\"new_fine\"");
              return t;
          }(),
          [&] {  // a differential without its previous driver
              std::string t = text;
              t.replace(t.find("\"previous_driver\""), 17, "\"driver\"");
              return t;
          }()}) {
        std::ofstream(path) << damaged;
        EXPECT_FALSE(load_record(dir() / "canary", r.identity)) << damaged;
        EXPECT_TRUE(load_records(dir() / "canary").empty());
    }
    // Another identity's record under this one's name.
    Record other = r;
    other.identity.driver = "1.0";
    std::ofstream(path) << to_json(other);
    EXPECT_FALSE(load_record(dir() / "canary", r.identity));
    EXPECT_TRUE(load_records(dir() / "canary").empty());
}

TEST_F(CanaryRecord, ARecordWithoutDifferentialsReadsAsNone) {
    // Records written before the differential check have no such member.
    nlohmann::json j = nlohmann::json::parse(to_json(sample()));
    for (nlohmann::json& v : j["verdicts"]) {
        v.erase("differential");
    }
    const std::string text = j.dump();
    ASSERT_EQ(text.find("differential"), std::string::npos) << text;
    auto back = record_from_json(text);
    ASSERT_TRUE(back) << back.error().message;
    for (const Verdict& v : back->verdicts) {
        EXPECT_FALSE(v.differential) << v.variant;
    }
}

TEST_F(CanaryRecord, AVariantIsCoveredByItsOwnVerdictElseItsPrecisionPathsWorst) {
    const Record r = sample();
    auto variant = [](const char* id) { return *kernels::parse_variant(id); };
    const Verdict* own = verdict_for(r, variant("dot:dtype=f32,arith=f32,ls=256"));
    ASSERT_NE(own, nullptr);
    EXPECT_EQ(own->state, VerdictState::validated);
    // The same path (f32), another activation: the f32 verdict stands for it.
    const Verdict* kin = verdict_for(r, variant("conv2d:dtype=f32,act=relu,ls=64"));
    ASSERT_NE(kin, nullptr);
    EXPECT_EQ(kin->state, VerdictState::suspect);
    // No other element type's test stands for a variant: f16 was not run.
    EXPECT_EQ(verdict_for(r, variant("conv2d:dtype=f16,act=relu,ls=64")), nullptr);
    EXPECT_EQ(verdict_for(r, variant("dot:dtype=bf16,arith=f32,ls=256")), nullptr);
    EXPECT_EQ(verdict_for(r, variant("batchnorm:dtype=f32,act=none,ls=256")), nullptr);
    EXPECT_EQ(verdict_for(r, variant("qconv_pointwise:out=i8")), nullptr);
}

// An unrun variant takes the worse of its path's verdict and its activation's.
TEST_F(CanaryRecord, AnActivationFoundSuspectOnOnePathCoversTheOthers) {
    Record r = sample();
    r.verdicts.push_back({"conv2d:dtype=f16,act=relu,ls=64", VerdictState::suspect, "relu", 42, 1.0,
                          "relu wrong", std::nullopt});
    r.verdicts.push_back({"conv2d:dtype=bf16,act=none,ls=64", VerdictState::validated, "", 42, 0.0,
                          "ok", std::nullopt});
    const Verdict* v = verdict_for(r, *kernels::parse_variant("conv2d:dtype=bf16,act=relu,ls=64"));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->state, VerdictState::suspect);
    EXPECT_EQ(v->check, "relu");
    const Verdict* same =
        verdict_for(r, *kernels::parse_variant("conv2d:dtype=bf16,act=none,ls=64"));
    ASSERT_NE(same, nullptr);
    EXPECT_EQ(same->state, VerdictState::validated);
}

}  // namespace
}  // namespace kcache::canary
