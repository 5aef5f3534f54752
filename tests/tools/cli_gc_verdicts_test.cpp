// kcache gc and the node's verdicts on binaries built elsewhere
// (<store>/vouched/<key hex>.<digest>, canary/src/binary_vouch.cpp): a
// verdict goes when no entry of the user store or of a runtime pack has its
// key any more (an entry removed, a driver replaced: the key names it), and
// nothing else under vouched/ is touched.

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cli_runner.hpp"
#include "kcache/store/store.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

class CliGcVerdicts : public CliTest {
  protected:
    std::filesystem::path vouched() const { return store_dir() / "vouched"; }
    // Writes a verdict file for `key` as the check names one.
    std::filesystem::path verdict(const ks::Key& key) const {
        std::filesystem::create_directories(vouched());
        const auto path = vouched() / (key.hex() + "." + std::string(64, 'a'));
        std::ofstream{path};
        return path;
    }
};

TEST_F(CliGcVerdicts, GcRemovesTheVerdictsOfKeysNoStoreOrPackHolds) {
    // Entries 1 and 2 in the user store, 3 only in a runtime pack.
    {
        auto pack_source = ks::Store::open(dir() / "pack-source");
        ASSERT_TRUE(pack_source.ok());
        ASSERT_TRUE(
            pack_source->put(sample_fields(3), binary_like(4096, 3), test_provenance()).ok());
        std::filesystem::create_directories(dir() / "packs");
        ASSERT_TRUE(pack_source->export_pack(dir() / "packs" / "p.kcpack").ok());
        auto store = ks::Store::open(store_dir());
        ASSERT_TRUE(store.ok());
        for (int i : {1, 2}) {
            ASSERT_TRUE(store->put(sample_fields(i), binary_like(4096, i), test_provenance()).ok());
        }
    }
    const std::string packs = "KCACHE_PACKS=" + (dir() / "packs").string();
    const auto v1 = verdict(ks::make_key(sample_fields(1)));
    const auto v2 = verdict(ks::make_key(sample_fields(2)));
    const auto v3 = verdict(ks::make_key(sample_fields(3)));
    ks::KeyFields other_driver = sample_fields(1);
    other_driver.driver_version += "-previous";
    const auto gone = verdict(ks::make_key(other_driver));
    const auto removed_entry = verdict(ks::make_key(sample_fields(4)));
    std::ofstream(vouched() / "notes") << "not a verdict";

    const CliRun gc = kcache({"gc", "--older-than", "3650d", "--json"}, {packs});
    ASSERT_EQ(gc.code, 0) << gc.err;
    EXPECT_EQ(gc.json()["removed"], 0);
    EXPECT_EQ(gc.json()["verdicts_removed"], 2);
    EXPECT_FALSE(std::filesystem::exists(gone)) << "another driver's";
    EXPECT_FALSE(std::filesystem::exists(removed_entry)) << "an entry no longer stored";
    for (const auto& kept : {v1, v2, v3, vouched() / "notes"}) {
        EXPECT_TRUE(std::filesystem::exists(kept)) << kept;
    }

    // Emptied, the store keeps only the pack's verdict.
    const CliRun all = kcache({"gc", "--max-size", "0", "--json"}, {packs});
    ASSERT_EQ(all.code, 0) << all.err;
    EXPECT_EQ(all.json()["removed"], 2);
    EXPECT_EQ(all.json()["verdicts_removed"], 2);
    EXPECT_FALSE(std::filesystem::exists(v1));
    EXPECT_FALSE(std::filesystem::exists(v2));
    EXPECT_TRUE(std::filesystem::exists(v3)) << "a runtime pack's entry";
    const CliRun text = kcache({"gc", "--older-than", "1d"}, {packs});
    EXPECT_EQ(text.code, 0);
    EXPECT_NE(text.out.find("0 stale verdicts"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace kcache::test
