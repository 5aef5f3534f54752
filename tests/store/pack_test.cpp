// Packs: exported from a store, read-only (even for a user who cannot write
// the file or its root-owned directory), searched after the user store,
// imported with verification, newer schemas refused.

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "store_fixture.hpp"

using kcache::test::binary_like;
using kcache::test::file_bytes;
using kcache::test::kNobody;
using kcache::test::raw_blob;
using kcache::test::raw_sql;
using kcache::test::raw_sql_blob;
using kcache::test::run_as_user;
using kcache::test::sample_fields;
using kcache::test::test_provenance;
namespace fs = std::filesystem;

namespace {

// Exports entries 0..n-1 (payload seed = index) to `pack`.
void make_pack(ks::Store& store, const fs::path& pack, int n) {
    for (int i = 0; i < n; ++i) {
        ASSERT_TRUE(store.put(sample_fields(i), binary_like(4000 + i, i), test_provenance()).ok());
    }
    auto exported = store.export_pack(pack);
    ASSERT_TRUE(exported.ok()) << exported.error().message;
    EXPECT_EQ(exported.value(), static_cast<std::uint64_t>(n));
}

// Makes `pack` and its directory read-only and owned by root.
void lock_down(const fs::path& pack) {
    ASSERT_EQ(::chown(pack.c_str(), 0, 0), 0);
    ASSERT_EQ(::chmod(pack.c_str(), 0444), 0);
    ASSERT_EQ(::chown(pack.parent_path().c_str(), 0, 0), 0);
    ASSERT_EQ(::chmod(pack.parent_path().c_str(), 0555), 0);
}

}  // namespace

TEST_F(Store, PackIsReadableWhenFileAndDirectoryAreReadOnlyAndRootOwned) {
    const fs::path packs = dir() / "share" / "packs";
    fs::create_directories(packs);
    const fs::path pack = packs / "igpu.kcpack";
    {
        auto store = open_store();
        make_pack(store, pack, 5);
    }
    lock_down(pack);
    ASSERT_EQ(::chmod(dir().c_str(), 0755), 0);
    ASSERT_EQ(::chmod((dir() / "share").c_str(), 0755), 0);
    const std::string before = file_bytes(pack);
    // As an ordinary user, for whom the permission bits really apply.
    std::string report = run_as_user(kNobody, [&]() -> std::string {
        if (::access(pack.c_str(), W_OK) == 0 || ::access(packs.c_str(), W_OK) == 0) {
            return "pack or directory is writable: the test proves nothing";
        }
        auto p = ks::Pack::open(pack);
        if (!p.ok()) {
            return "open: " + p.error().message;
        }
        for (int i = 0; i < 5; ++i) {
            auto got = p->get(sample_fields(i));
            if (!got.ok()) {
                return "get " + std::to_string(i) + ": " + got.error().detail;
            }
            if (got->bytes != binary_like(4000 + i, i)) {
                return "bytes differ for " + std::to_string(i);
            }
        }
        if (p->get(sample_fields(99)).error().reason != ks::MissReason::not_found) {
            return "absent key not NotFound";
        }
        return p->list()->size() == 5 ? "" : "list size wrong";
    });
    EXPECT_EQ(report, "");
    EXPECT_EQ(file_bytes(pack), before) << "a pack must never be written";
    for (const auto& e : fs::directory_iterator(packs)) {
        EXPECT_EQ(e.path(), pack) << "left beside the pack: " << e.path();
    }
}

TEST_F(Store, TieredStoreSearchesUserThenPacksAndSaysWhichAnswered) {
    const fs::path pack_a = dir() / "a.kcpack";
    const fs::path pack_b = dir() / "b.kcpack";
    {
        ks::Policy p;
        auto other = ks::Store::open(dir() / "builder", p);
        ASSERT_TRUE(other.ok());
        make_pack(other.value(), pack_a, 3);  // entries 0, 1, 2
        ASSERT_TRUE(other->put(sample_fields(7), binary_like(70, 7), test_provenance()).ok());
        auto n = other->export_pack(pack_b, {ks::make_key(sample_fields(7))});
        ASSERT_TRUE(n.ok());
        EXPECT_EQ(n.value(), 1u);
    }
    auto user = open_store();
    ASSERT_TRUE(user.put(sample_fields(1), binary_like(11, 11), test_provenance()).ok());
    std::vector<ks::Pack> packs;
    packs.push_back(std::move(ks::Pack::open(pack_a)).value());
    packs.push_back(std::move(ks::Pack::open(pack_b)).value());
    ks::TieredStore tiers(std::move(user), std::move(packs));

    auto from_user = tiers.get(sample_fields(1));
    ASSERT_TRUE(from_user.ok());
    EXPECT_EQ(from_user->tier.kind, ks::Tier::Kind::user);
    EXPECT_EQ(from_user->entry.bytes, binary_like(11, 11));
    auto from_a = tiers.get(sample_fields(2));
    ASSERT_TRUE(from_a.ok());
    EXPECT_EQ(from_a->tier.kind, ks::Tier::Kind::pack);
    EXPECT_EQ(from_a->tier.index, 0u);
    auto from_b = tiers.get(sample_fields(7));
    ASSERT_TRUE(from_b.ok());
    EXPECT_EQ(from_b->tier.index, 1u);
    EXPECT_EQ(from_b->tier.name, pack_b.string());
    auto none = tiers.get(sample_fields(50));
    ASSERT_FALSE(none.ok());
    ASSERT_EQ(none.error().misses.size(), 3u);
    for (const auto& [tier, miss] : none.error().misses) {
        EXPECT_EQ(miss.reason, ks::MissReason::not_found) << tier.name;
    }
    auto stats = tiers.stats();
    ASSERT_TRUE(stats.ok());
    ASSERT_EQ(stats->tiers.size(), 3u);
    EXPECT_EQ(stats->tiers[0].hits, 1u);
    EXPECT_EQ(stats->tiers[1].hits, 1u);
    EXPECT_EQ(stats->tiers[2].hits, 1u);
    EXPECT_EQ(stats->tiers[2].misses_for(ks::MissReason::not_found), 1u);  // only 50 reached it
}

TEST_F(Store, ImportVerifiesEveryEntryAndSkipsCorruptOnes) {
    const fs::path pack = dir() / "p.kcpack";
    {
        auto builder = ks::Store::open(dir() / "builder");
        ASSERT_TRUE(builder.ok());
        make_pack(builder.value(), pack, 4);
    }
    // Damage one entry inside the pack.
    auto blob = raw_blob(pack, "SELECT data FROM blobs ORDER BY id LIMIT 1");
    blob[blob.size() / 2] ^= 0x01;
    raw_sql_blob(pack, "UPDATE blobs SET data = ? WHERE id = (SELECT min(id) FROM blobs)", blob);
    {
        auto p = ks::Pack::open(pack);
        ASSERT_TRUE(p.ok());
        auto bad = p->get(sample_fields(0));
        ASSERT_FALSE(bad.ok());
        EXPECT_EQ(bad.error().reason, ks::MissReason::corrupt);
    }
    auto store = open_store();
    ASSERT_TRUE(store.put(sample_fields(3), binary_like(4003, 3), test_provenance()).ok());
    auto report = store.import_pack(pack);
    ASSERT_TRUE(report.ok()) << report.error().message;
    EXPECT_EQ(report->corrupt, 1u);
    EXPECT_EQ(report->imported, 2u);
    EXPECT_EQ(report->already_present, 1u);
    EXPECT_FALSE(store.get(sample_fields(0)).ok());
    auto got = store.get(sample_fields(1));
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got->bytes, binary_like(4001, 1));
    EXPECT_EQ(got->info.provenance.origin, ks::Origin::imported);
}

TEST_F(Store, PackOfNewerSchemaIsRefusedAndExportNeverOverwrites) {
    const fs::path pack = dir() / "p.kcpack";
    auto store = open_store();
    make_pack(store, pack, 1);
    auto again = store.export_pack(pack);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().code, ks::StoreErrc::invalid_argument);
    raw_sql(pack, "UPDATE schema_version SET version = 999");
    auto p = ks::Pack::open(pack);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().code, ks::StoreErrc::schema_too_new);
    auto imported = store.import_pack(pack);
    ASSERT_FALSE(imported.ok());
    EXPECT_EQ(imported.error().code, ks::StoreErrc::schema_too_new);
    auto missing = ks::Pack::open(dir() / "missing.kcpack");
    EXPECT_FALSE(missing.ok());
    std::ofstream(dir() / "garbage.kcpack") << std::string(8192, 'x');
    auto garbage = ks::Pack::open(dir() / "garbage.kcpack");
    ASSERT_FALSE(garbage.ok());
    EXPECT_EQ(garbage.error().code, ks::StoreErrc::corrupt) << garbage.error().message;
}

TEST_F(Store, AotCoverageRoundTripsAndTheFirstPackWins) {
    const fs::path pack_a = dir() / "a.kcpack";
    const fs::path pack_b = dir() / "b.kcpack";
    const fs::path plain = dir() / "plain.kcpack";
    {
        auto builder = ks::Store::open(dir() / "builder", ks::Policy{});
        ASSERT_TRUE(builder.ok());
        make_pack(builder.value(), pack_a, 1);
        ASSERT_TRUE(builder->export_pack(pack_b).ok());
        ASSERT_TRUE(builder->export_pack(plain).ok());
    }
    const ks::AotCoverage gap{"mtl-h",          "mtl-h",       ks::CoverageStatus::not_targetable,
                              {0x7d55, 0x7dd5}, "ocloc 22.43", "cannot target mtl-h"};
    const ks::AotCoverage tgl{"tgllp", "tgllp", ks::CoverageStatus::covered, {0x9a49}, "ocloc", ""};
    ASSERT_TRUE(ks::write_aot_coverage(pack_a, {gap, tgl}).ok());
    ks::AotCoverage covered_b = gap;
    covered_b.status = ks::CoverageStatus::covered;
    ASSERT_TRUE(ks::write_aot_coverage(pack_b, {covered_b}).ok());

    auto read = ks::read_aot_coverage(pack_a);
    ASSERT_TRUE(read.ok()) << read.error().message;
    ASSERT_EQ(read->size(), 2u);
    EXPECT_EQ((*read)[0].family, "mtl-h");  // by family name
    EXPECT_EQ((*read)[0].status, ks::CoverageStatus::not_targetable);
    EXPECT_EQ((*read)[0].pci_ids, (std::vector<std::uint32_t>{0x7d55, 0x7dd5}));
    EXPECT_EQ((*read)[0].compiler, "ocloc 22.43");
    EXPECT_EQ((*read)[0].detail, "cannot target mtl-h");
    EXPECT_EQ((*read)[1].family, "tgllp");
    EXPECT_EQ(raw_sql(pack_a, "SELECT pci_ids FROM kcache_aot_coverage WHERE family = 'mtl-h'"),
              "0x7d55,0x7dd5");
    auto none = ks::read_aot_coverage(plain);
    ASSERT_TRUE(none.ok()) << none.error().message;
    EXPECT_TRUE(none->empty());  // a pack made by export has no table

    std::vector<ks::Pack> packs;
    packs.push_back(std::move(ks::Pack::open(plain)).value());
    packs.push_back(std::move(ks::Pack::open(pack_b)).value());
    packs.push_back(std::move(ks::Pack::open(pack_a)).value());
    ks::TieredStore tiers(std::nullopt, std::move(packs));
    auto found = tiers.aot_coverage("mtl-h");
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->first, pack_b);  // the first pack that has a record
    EXPECT_EQ(found->second.status, ks::CoverageStatus::covered);
    ASSERT_TRUE(tiers.aot_coverage("tgllp").has_value());
    EXPECT_EQ(tiers.aot_coverage("tgllp")->first, pack_a);
    EXPECT_FALSE(tiers.aot_coverage("adl-p").has_value());
}

TEST_F(Store, DamagedCoverageRowIsAClearErrorAndAnEmptyFamilyIsRefused) {
    const fs::path pack = dir() / "p.kcpack";
    {
        auto builder = ks::Store::open(dir() / "builder", ks::Policy{});
        ASSERT_TRUE(builder.ok());
        make_pack(builder.value(), pack, 1);
    }
    auto empty = ks::write_aot_coverage(pack, {{"", "t", ks::CoverageStatus::covered, {}, "", ""}});
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.error().code, ks::StoreErrc::invalid_argument);
    ASSERT_TRUE(
        ks::write_aot_coverage(pack, {{"tgllp", "tgllp", ks::CoverageStatus::covered, {}, "", ""}})
            .ok());

    raw_sql(pack, "UPDATE kcache_aot_coverage SET status = 'maybe'");
    auto bad_status = ks::Pack::open(pack);
    ASSERT_FALSE(bad_status.ok());
    EXPECT_EQ(bad_status.error().code, ks::StoreErrc::corrupt);
    EXPECT_NE(bad_status.error().message.find("family 'tgllp' has status 'maybe'"),
              std::string::npos)
        << bad_status.error().message;

    raw_sql(pack, "UPDATE kcache_aot_coverage SET status = 'covered', pci_ids = '0x12,zz'");
    auto bad_ids = ks::read_aot_coverage(pack);
    ASSERT_FALSE(bad_ids.ok());
    EXPECT_NE(bad_ids.error().message.find("pci_ids '0x12,zz'"), std::string::npos)
        << bad_ids.error().message;

    EXPECT_FALSE(ks::read_aot_coverage(dir() / "missing.kcpack").ok());
}

TEST_F(Store, CoverageIsNeverWrittenIntoAFileThatIsNotAPack) {
    const fs::path other = dir() / "other.db";
    raw_sql(other, "CREATE TABLE notes(text TEXT)");
    auto written = ks::write_aot_coverage(
        other, {{"tgllp", "tgllp", ks::CoverageStatus::covered, {}, "", ""}});
    ASSERT_FALSE(written.ok());
    EXPECT_EQ(written.error().code, ks::StoreErrc::foreign) << written.error().message;
    EXPECT_EQ(raw_sql(other, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'kcache%'"), "0");
}
