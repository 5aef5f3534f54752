// A hot copy answers only while its entry holds the same bytes: a copy left
// without its entry (an entry lost or deleted by another program), one that
// differs from its entry, or a damaged one is removed, not served; and a
// damaged copy is replaced.

#include <filesystem>
#include <fstream>

#include "hot_copies.hpp"
#include "kcache/common/sha256.hpp"
#include "store_fixture.hpp"

using kcache::test::binary_like;
using kcache::test::damage_hot_copies;
using kcache::test::deferred_policy;
using kcache::test::hot_copies;
using kcache::test::LogCapture;
using kcache::test::raw_sql;
using kcache::test::raw_sql_blob;
using kcache::test::sample_fields;
using kcache::test::test_provenance;

namespace {

ks::Policy read_only() {
    ks::Policy p;
    p.mode = ks::OpenMode::read_only;
    return p;
}

// Deletes the entry of `fields` behind kcache's back (another program: no
// trigger removes its copy).
void delete_row(const std::filesystem::path& db, const ks::KeyFields& fields) {
    raw_sql(db, "DELETE FROM entries WHERE key = '" + ks::make_key(fields).hex() + "'");
}

std::filesystem::path copy_path(const std::filesystem::path& store_dir, const ks::KeyFields& f) {
    const auto copies = hot_copies(store_dir);
    return copies.empty() ? std::filesystem::path()
                          : copies.front().parent_path() / ks::make_key(f).hex();
}

}  // namespace

TEST_F(Store, ACopyWithoutItsEntryNeverAnswersAnOpenStore) {
    const auto bytes = binary_like(16 * 1024, 1);
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), bytes, test_provenance()).ok());
    }
    const auto copy = copy_path(store_dir(), sample_fields(1));
    ASSERT_TRUE(std::filesystem::exists(copy));
    delete_row(db_path(), sample_fields(1));
    auto store = open_store();
    EXPECT_FALSE(store.get_hot(sample_fields(1)));
    EXPECT_FALSE(std::filesystem::exists(copy)) << "removed, not left for the next process";
}

TEST_F(Store, ACopyAnsweringBeforeTheDatabaseOpensIsCheckedAtTheWriteBack) {
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(16 * 1024, 1), test_provenance()).ok());
    }
    const auto copy = copy_path(store_dir(), sample_fields(1));
    delete_row(db_path(), sample_fields(1));
    {
        LogCapture log;
        auto store = ks::Store::open(store_dir(), deferred_policy());
        ASSERT_TRUE(store.ok()) << store.error().message;
        // A first hit does not open SQLite (design.md, "Hot copies"); the
        // write-back of its hit does, and checks the copy then.
        EXPECT_TRUE(store->get_hot(sample_fields(1)));
        ASSERT_TRUE(store->flush().ok());
        EXPECT_FALSE(std::filesystem::exists(copy));
        EXPECT_TRUE(log.contains("has no entry")) << "the removal is reported";
    }
    auto again = ks::Store::open(store_dir(), deferred_policy());
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->get_hot(sample_fields(1)));
}

TEST_F(Store, AMissThroughTheDatabaseRemovesTheCopyEvenReadOnly) {
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(16 * 1024, 1), test_provenance()).ok());
        ASSERT_TRUE(store.put(sample_fields(2), binary_like(16 * 1024, 2), test_provenance()).ok());
    }
    const auto copy1 = copy_path(store_dir(), sample_fields(1));
    const auto copy2 = copy_path(store_dir(), sample_fields(2));
    delete_row(db_path(), sample_fields(1));
    // kcache warm's check is a read-only handle: what it finds missing or
    // damaged must not be answered by the copy in the next process.
    LogCapture log;
    auto checker = open_store(read_only());
    EXPECT_EQ(checker.get(sample_fields(1)).error().reason, ks::MissReason::not_found);
    EXPECT_FALSE(std::filesystem::exists(copy1));

    raw_sql_blob(db_path(),
                 "UPDATE blobs SET data = ? WHERE id = (SELECT id FROM entries WHERE key = '" +
                     ks::make_key(sample_fields(2)).hex() + "')",
                 std::vector<std::uint8_t>(100, 7));
    EXPECT_EQ(checker.get(sample_fields(2)).error().reason, ks::MissReason::corrupt);
    EXPECT_FALSE(std::filesystem::exists(copy2));
    EXPECT_TRUE(log.contains("not removed by this read-only handle"));
    EXPECT_FALSE(log.contains("quarantined")) << "a read-only handle removes no entry";

    auto writer = open_store();
    EXPECT_EQ(writer.get(sample_fields(2)).error().reason, ks::MissReason::corrupt);
    EXPECT_TRUE(log.contains("quarantined"));
    EXPECT_EQ(raw_sql(db_path(), "SELECT count(*) FROM entries"), "0");
}

TEST_F(Store, ACopyOfOtherBytesThanItsEntryIsRemoved) {
    auto store = open_store();
    const auto bytes = binary_like(16 * 1024, 1);
    ASSERT_TRUE(store.put(sample_fields(1), bytes, test_provenance()).ok());
    const auto copy = copy_path(store_dir(), sample_fields(1));
    // A sound copy format with its checksum recomputed over other bytes (and
    // one larger than the entry): checked against the entry, not served.
    for (std::size_t size : {bytes.size(), bytes.size() * 4}) {
        const auto other = binary_like(size, 99);
        const std::string serialized = ks::serialize_key_fields(ks::normalized(sample_fields(1)));
        ks::hot::Tally tally;
        ks::hot::write(copy.parent_path(), ks::make_key(sample_fields(1)), serialized, other,
                       ks::checksum_of(other), 1ull << 30, tally);
        ASSERT_TRUE(std::filesystem::exists(copy));
        EXPECT_FALSE(store.get_hot(sample_fields(1)));
        EXPECT_FALSE(std::filesystem::exists(copy));
    }
    auto got = store.get(sample_fields(1));
    ASSERT_TRUE(got.ok());
    EXPECT_TRUE(got->bytes == bytes);
}

TEST_F(Store, ADamagedCopyIsRemovedAndWrittenAgainFromItsEntry) {
    const auto bytes = binary_like(16 * 1024, 1);
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), bytes, test_provenance()).ok());
    }
    const auto copy = copy_path(store_dir(), sample_fields(1));
    ASSERT_EQ(damage_hot_copies(store_dir()), 1u);
    {
        auto store = ks::Store::open(store_dir(), deferred_policy());
        ASSERT_TRUE(store.ok());
        EXPECT_FALSE(store->get_hot(sample_fields(1)));
        EXPECT_FALSE(std::filesystem::exists(copy)) << "a damaged copy is not kept";
        ASSERT_TRUE(store->get(sample_fields(1)).ok());
    }  // the write-back of the hit writes the copy again
    auto store = ks::Store::open(store_dir(), deferred_policy());
    ASSERT_TRUE(store.ok());
    auto hot = store->get_hot(sample_fields(1));
    ASSERT_TRUE(hot);
    EXPECT_TRUE(*hot == bytes);
}

TEST_F(Store, ACopyLargerThanTheBoundIsNotReadBeforeTheDatabaseOpens) {
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(64 * 1024, 1), test_provenance()).ok());
    }
    ks::Policy small = deferred_policy();
    small.max_hot_bytes = 16 * 1024;
    auto store = ks::Store::open(store_dir(), small);
    ASSERT_TRUE(store.ok());
    EXPECT_FALSE(store->get_hot(sample_fields(1)));
    EXPECT_TRUE(std::filesystem::exists(copy_path(store_dir(), sample_fields(1))))
        << "left to processes that keep larger copies";
}
