// kcache warm on PoCL against a damaged store: what it counts as already
// cached is an entry that passes its checksum, a damaged or lost entry is
// rebuilt (even when its hot copy is sound), and what it prints is what
// happened.

#include <gtest/gtest.h>

#include <fstream>

#include "cli_runner.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

class CliWarmRepair : public CliTest {
  protected:
    std::filesystem::path db() const { return store_dir() / ks::kStoreFileName; }

    // Warms three variants of one small kernel; returns the run.
    CliRun warm() {
        std::ofstream(dir() / "scale.cl") << "__kernel void scale(__global float* x, float a) "
                                             "{ x[get_global_id(0)] *= a * K; }\n";
        std::ofstream(dir() / "m.json") << R"({"kernels": [{"name": "scale",
            "sources": ["scale.cl"], "entry_points": ["scale"], "options": "-cl-std=CL1.2",
            "variants": [{"name": "a", "options": "-DK=1.0f"}, {"name": "b", "options": "-DK=2.0f"},
                         {"name": "c", "options": "-DK=3.0f"}]}]})";
        return kcache({"warm", "--manifest", (dir() / "m.json").string(), "--json", "--quiet"});
    }

    // Flips one byte in the middle of the stored blob of the first entry.
    void flip_a_stored_byte() {
        const std::string id = "(SELECT id FROM entries ORDER BY id LIMIT 1)";
        auto blob = raw_blob(db(), "SELECT data FROM blobs WHERE id = " + id);
        ASSERT_FALSE(blob.empty());
        blob[blob.size() / 2] ^= 0x40;
        raw_sql_blob(db(), "UPDATE blobs SET data = ? WHERE id = " + id, blob);
    }

    std::string rows() { return raw_sql(db(), "SELECT count(*) FROM entries"); }
};

TEST_F(CliWarmRepair, AFlippedByteInAStoredBlobIsRebuiltNotCountedAsCached) {
    const CliRun first = warm();
    ASSERT_EQ(first.code, 0) << first.err;
    ASSERT_EQ(first.json()["built"], 3);
    ASSERT_EQ(hot_copies(store_dir()).size(), 3u) << "the entries' hot copies are sound";
    flip_a_stored_byte();

    const CliRun repaired = warm();
    ASSERT_EQ(repaired.code, 0) << repaired.err;
    EXPECT_EQ(repaired.json()["built"], 1) << repaired.out << repaired.err;
    EXPECT_EQ(repaired.json()["already_cached"], 2);
    // Removed once, by the handle that can: the only "quarantined" line.
    const auto quarantined = repaired.err.find("quarantined");
    ASSERT_NE(quarantined, std::string::npos) << repaired.err;
    EXPECT_EQ(repaired.err.find("quarantined", quarantined + 1), std::string::npos) << repaired.err;
    EXPECT_EQ(rows(), "3");
    const CliRun verify = kcache({"verify"});
    EXPECT_EQ(verify.code, 0) << verify.out;
    EXPECT_EQ(warm().json()["already_cached"], 3);
}

TEST_F(CliWarmRepair, AnEntryLostBehindItsHotCopyIsRebuilt) {
    ASSERT_EQ(warm().code, 0);
    raw_sql(db(), "DELETE FROM entries WHERE id = (SELECT id FROM entries ORDER BY id LIMIT 1)");
    ASSERT_EQ(rows(), "2");
    ASSERT_EQ(hot_copies(store_dir()).size(), 3u) << "its copy stays: no trigger in sqlite3";
    const CliRun repaired = warm();
    ASSERT_EQ(repaired.code, 0) << repaired.err;
    EXPECT_EQ(repaired.json()["built"], 1) << repaired.out;
    EXPECT_EQ(repaired.json()["already_cached"], 2);
    EXPECT_EQ(rows(), "3");
}

TEST_F(CliWarmRepair, DamagedHotCopiesAreNotTakenForTheirEntries) {
    ASSERT_EQ(warm().code, 0);
    ASSERT_EQ(damage_hot_copies(store_dir()), 3u);
    // The entries themselves are sound: cached, and nothing is quarantined.
    const CliRun again = warm();
    ASSERT_EQ(again.code, 0) << again.err;
    EXPECT_EQ(again.json()["already_cached"], 3) << again.out;
    EXPECT_EQ(again.err.find("quarantined"), std::string::npos) << again.err;
    EXPECT_EQ(rows(), "3");
    // verify checks the copies too: removed, then written again from the
    // entries it reads.
    const CliRun verify = kcache({"verify"});
    EXPECT_EQ(verify.code, 0) << verify.err;
    EXPECT_NE(verify.out.find("checked 3 hot copies, 3 removed"), std::string::npos) << verify.out;
    EXPECT_NE(kcache({"verify"}).out.find("checked 3 hot copies, 0 removed"), std::string::npos);
}

TEST_F(CliWarmRepair, EntriesEvictedByTheSameRunAreReportedAsNotKept) {
    ASSERT_EQ(warm().code, 0);
    const auto stored = kcache({"stats", "--json"}).json()["stored_bytes"].get<std::uint64_t>();
    // Room for one of the three entries (their sizes are alike), not for two.
    const std::string bound = std::to_string(stored / 2);
    const std::string small = "KCACHE_DIR=" + (dir() / "small").string();
    const CliRun r =
        kcache({"warm", "--manifest", (dir() / "m.json").string(), "--json", "--quiet"},
               {small, "KCACHE_MAX_SIZE=" + bound});
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    const int built = r.json()["built"].get<int>();
    const int not_kept = r.json()["not_stored"].get<int>();
    EXPECT_EQ(built + not_kept, 3) << r.out;
    EXPECT_GE(not_kept, 1) << r.out;
    EXPECT_NE(r.out.find("evicted by this run's later builds: KCACHE_MAX_SIZE"), std::string::npos)
        << r.out;
    EXPECT_EQ(raw_sql(dir() / "small" / ks::kStoreFileName, "SELECT count(*) FROM entries"),
              std::to_string(built));
}

}  // namespace
}  // namespace kcache::test
