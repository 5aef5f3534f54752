// Hot copies (Store::get_hot): answered without SQLite, gone with their entry
// whoever deletes it, checked before use, bounded, never taken from another
// store file; and the deferred open that lets a first hit skip SQLite.

#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "store_fixture.hpp"

using kcache::test::binary_like;
using kcache::test::damage_hot_copies;
using kcache::test::deferred_policy;
using kcache::test::hot_copies;
using kcache::test::raw_sql_blob;
using kcache::test::sample_fields;
using kcache::test::test_provenance;

namespace {

// Moves the database and its WAL files of `dir` to `<name>.aside*`.
void move_database_aside(const std::filesystem::path& dir) {
    for (const char* suffix : {"", "-wal", "-shm"}) {
        const std::filesystem::path from = dir / (std::string(ks::kStoreFileName) + suffix);
        std::error_code ec;
        std::filesystem::rename(from, dir / (std::string("aside") + suffix), ec);
    }
}

}  // namespace

TEST_F(Store, APutKeepsAHotCopyThatAnswersWithoutTheDatabase) {
    const auto bytes = binary_like(40 * 1024, 3);
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), bytes, test_provenance()).ok());
        auto hot = store.get_hot(sample_fields(1));
        ASSERT_TRUE(hot);
        EXPECT_TRUE(*hot == bytes);
        EXPECT_FALSE(store.get_hot(sample_fields(2)));
    }
    ASSERT_EQ(hot_copies(store_dir()).size(), 1u);
    // A deferred open of the stamped file does not open SQLite: with the
    // database moved away after it, the hot copy still answers, and the
    // first call that needs SQLite opens what is there now (a new store).
    auto store = ks::Store::open(store_dir(), deferred_policy());
    ASSERT_TRUE(store.ok()) << store.error().message;
    move_database_aside(store_dir());
    auto hot = store->get_hot(sample_fields(1));
    ASSERT_TRUE(hot);
    EXPECT_TRUE(*hot == bytes);
    auto got = store->get(sample_fields(1));
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().reason, ks::MissReason::not_found);
    auto stats = store->stats();
    ASSERT_TRUE(stats.ok()) << stats.error().message;
    EXPECT_EQ(stats->tiers[0].hits, 1u) << "the hot hit is counted like any hit";
}

TEST_F(Store, EveryDeletionTakesTheHotCopyWithIt) {
    ks::Policy small;
    small.max_bytes = 64 * 1024;  // room for a few entries only: puts evict
    auto store = open_store(small);
    auto other = open_store(small);  // another connection, as another process has
    for (int i = 1; i <= 4; ++i) {
        ASSERT_TRUE(store.put(sample_fields(i), binary_like(20 * 1024, i), test_provenance()).ok());
    }
    ASSERT_TRUE(store.get_hot(sample_fields(4)));

    ASSERT_TRUE(other.remove(ks::make_key(sample_fields(4))).value());
    EXPECT_FALSE(store.get_hot(sample_fields(4))) << "removed by another connection";

    const auto newer = binary_like(20 * 1024, 99);
    ASSERT_TRUE(store.put(sample_fields(3), newer, test_provenance(), ks::PutMode::replace).ok());
    auto replaced = store.get_hot(sample_fields(3));
    ASSERT_TRUE(replaced);
    EXPECT_TRUE(*replaced == newer);

    for (int i = 5; i <= 12; ++i) {  // evicts the oldest entries
        ASSERT_TRUE(store.put(sample_fields(i), binary_like(20 * 1024, i), test_provenance()).ok());
    }
    auto listed = store.list();
    ASSERT_TRUE(listed.ok());
    EXPECT_EQ(hot_copies(store_dir()).size(), listed->size());
    for (int i = 1; i <= 12; ++i) {
        EXPECT_EQ(store.get_hot(sample_fields(i)).has_value(), store.get(sample_fields(i)).ok())
            << "entry " << i;
    }

    // A damaged entry is quarantined when read through SQLite: its copy goes too.
    const auto& last = listed->back();
    raw_sql_blob(db_path(),
                 "UPDATE blobs SET data = ? WHERE id = (SELECT id FROM entries WHERE key = '" +
                     last.key.hex() + "')",
                 std::vector<std::uint8_t>(100, 7));
    EXPECT_EQ(store.get(last.key).error().reason, ks::MissReason::corrupt);
    EXPECT_FALSE(store.get_hot(last.fields));

    ks::GcOptions all;
    all.max_bytes = 0;
    ASSERT_TRUE(other.gc(all).ok());
    EXPECT_TRUE(hot_copies(store_dir()).empty());
}

TEST_F(Store, AHotCopyIsCheckedBeforeUse) {
    auto store = open_store();
    const auto one = binary_like(8 * 1024, 1);
    ASSERT_TRUE(store.put(sample_fields(1), one, test_provenance()).ok());
    ASSERT_TRUE(store.put(sample_fields(2), binary_like(8 * 1024, 2), test_provenance()).ok());
    const auto dir = hot_copies(store_dir()).front().parent_path();
    const auto path1 = dir / ks::make_key(sample_fields(1)).hex();
    const auto path2 = dir / ks::make_key(sample_fields(2)).hex();
    const std::string good = kcache::test::file_bytes(path1);

    // Damaged bytes: the checksum refuses it; the entry still answers.
    ASSERT_EQ(damage_hot_copies(store_dir()), 2u);
    EXPECT_FALSE(store.get_hot(sample_fields(1)));
    auto got = store.get(sample_fields(1));
    ASSERT_TRUE(got.ok());
    EXPECT_TRUE(got->bytes == one);

    // Another key's copy under this key's name: the key record refuses it.
    std::ofstream(path2, std::ios::binary | std::ios::trunc) << good;
    EXPECT_FALSE(store.get_hot(sample_fields(2)));
    // Truncated, empty, a symlink to a sound copy, a directory: all refused.
    std::ofstream(path1, std::ios::binary | std::ios::trunc) << good.substr(0, good.size() - 1);
    EXPECT_FALSE(store.get_hot(sample_fields(1)));
    std::ofstream(path1, std::ios::binary | std::ios::trunc);
    EXPECT_FALSE(store.get_hot(sample_fields(1)));
    std::ofstream(dir.parent_path() / "elsewhere", std::ios::binary) << good;
    std::filesystem::remove(path1);
    std::filesystem::create_symlink(dir.parent_path() / "elsewhere", path1);
    EXPECT_FALSE(store.get_hot(sample_fields(1)));
    std::filesystem::remove(path1);
    std::filesystem::create_directory(path1);
    EXPECT_FALSE(store.get_hot(sample_fields(1)));
    // The sound copy back in place answers again.
    std::filesystem::remove(path1);
    std::ofstream(path1, std::ios::binary) << good;
    auto back = store.get_hot(sample_fields(1));
    ASSERT_TRUE(back);
    EXPECT_TRUE(*back == one);

    // A hot directory others could write is not trusted.
    ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
    EXPECT_FALSE(ks::Store::open(store_dir(), deferred_policy())->get_hot(sample_fields(1)));
}

// A first hit reads a copy whole in one call up to a size, its header
// first above it: at either size a sound copy answers, and one whose length
// disagrees with its header (a byte appended or cut off) is refused.
TEST_F(Store, AFirstHitChecksACopyAgainstItsHeaderAtEverySize) {
    for (const std::size_t n : {std::size_t{8} * 1024, std::size_t{6} << 20}) {
        SCOPED_TRACE(n);
        const auto fields = sample_fields(n > 10000 ? 2 : 1);
        const auto bytes = binary_like(n, n);
        ASSERT_TRUE(open_store().put(fields, bytes, test_provenance()).ok());
        const auto first_hit = [&] {
            auto store = ks::Store::open(store_dir(), deferred_policy());
            EXPECT_TRUE(store.ok()) << store.error().message;
            return store.ok() ? store->get_hot(fields) : std::nullopt;
        };
        auto hot = first_hit();
        ASSERT_TRUE(hot);
        EXPECT_TRUE(*hot == bytes);
        const auto path =
            hot_copies(store_dir()).front().parent_path() / ks::make_key(fields).hex();
        const std::string good = kcache::test::file_bytes(path);
        std::ofstream(path, std::ios::binary | std::ios::trunc) << good << 'x';
        EXPECT_FALSE(first_hit()) << "a byte appended";
        std::ofstream(path, std::ios::binary | std::ios::trunc) << good.substr(0, good.size() - 1);
        EXPECT_FALSE(first_hit()) << "a byte cut off";
        std::ofstream(path, std::ios::binary | std::ios::trunc) << good.substr(0, 60);
        EXPECT_FALSE(first_hit()) << "shorter than a header";
    }
}

TEST_F(Store, ACopyWithItsChecksumRecomputedNeverAnswersAFirstHit) {
    const auto bytes = binary_like(16 * 1024, 1);
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), bytes, test_provenance()).ok());
    }
    const auto copy = hot_copies(store_dir()).front();
    auto truncated = bytes;
    truncated.resize(bytes.size() / 2);
    for (const auto& crafted : {truncated, binary_like(16 * 1024, 2)}) {
        kcache::test::craft_hot_copy(copy, crafted);
        {
            // A fresh process's first hit, before SQLite opens: the tag,
            // keyed by the store's secret, refuses bytes the store did not write.
            auto store = ks::Store::open(store_dir(), deferred_policy());
            ASSERT_TRUE(store.ok()) << store.error().message;
            EXPECT_FALSE(store->get_hot(sample_fields(1)));
            auto got = store->get(sample_fields(1));
            ASSERT_TRUE(got.ok());
            EXPECT_TRUE(got->bytes == bytes);
        }  // its write-back replaces the crafted copy
        auto store = ks::Store::open(store_dir(), deferred_policy());
        auto hot = store->get_hot(sample_fields(1));
        ASSERT_TRUE(hot);
        EXPECT_TRUE(*hot == bytes);
    }
}

TEST_F(Store, AnEntryHitThroughTheDatabaseGetsItsCopyAtTheWriteBack) {
    const auto bytes = binary_like(16 * 1024, 5);
    {
        ks::Policy none;
        none.max_hot_bytes = 0;
        auto store = open_store(none);
        ASSERT_TRUE(store.put(sample_fields(1), bytes, test_provenance()).ok());
    }
    EXPECT_TRUE(hot_copies(store_dir()).empty()) << "max_hot_bytes 0 writes none";
    auto store = open_store();
    EXPECT_FALSE(store.get_hot(sample_fields(1)));
    ASSERT_TRUE(store.get(sample_fields(1)).ok());
    EXPECT_FALSE(store.get_hot(sample_fields(1))) << "made at the write-back, off the hit's path";
    ASSERT_TRUE(store.flush().ok());
    auto hot = store.get_hot(sample_fields(1));
    ASSERT_TRUE(hot);
    EXPECT_TRUE(*hot == bytes);
}

TEST_F(Store, HotCopiesStayWithinTheirBoundOldestFirst) {
    ks::Policy policy;
    policy.max_hot_bytes = 50 * 1024;  // two 20 KiB copies and their headers
    auto store = open_store(policy);
    for (int i = 1; i <= 5; ++i) {
        ASSERT_TRUE(store.put(sample_fields(i), binary_like(20 * 1024, i), test_provenance()).ok());
        // Modification times of consecutive puts may compare equal otherwise.
        const auto copy = hot_copies(store_dir());
        for (const auto& p : copy) {
            if (p.filename() == ks::make_key(sample_fields(i)).hex()) {
                std::filesystem::last_write_time(
                    p, std::filesystem::file_time_type::clock::now() + std::chrono::seconds(i));
            }
        }
    }
    std::uintmax_t total = 0;
    for (const auto& p : hot_copies(store_dir())) {
        total += std::filesystem::file_size(p);
    }
    EXPECT_LE(total, policy.max_hot_bytes);
    EXPECT_EQ(hot_copies(store_dir()).size(), 2u);
    EXPECT_TRUE(store.get_hot(sample_fields(5)));
    EXPECT_TRUE(store.get_hot(sample_fields(4)));
    EXPECT_FALSE(store.get_hot(sample_fields(1)));
    EXPECT_TRUE(store.get(sample_fields(1)).ok()) << "the entry itself stays";

    ks::Policy tiny;
    tiny.max_hot_bytes = 1024;  // smaller than one copy: none written
    auto small = open_store(tiny);
    ASSERT_TRUE(small.put(sample_fields(9), binary_like(4 * 1024, 9), test_provenance()).ok());
    EXPECT_FALSE(small.get_hot(sample_fields(9)));
}

TEST_F(Store, ANewStoreFileNeverAnswersFromTheCopiesOfTheOldOne) {
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(8 * 1024, 1), test_provenance()).ok());
    }
    // The store file removed by hand (its inode free to be reused): the
    // next open creates a new file, whose copies start empty.
    for (const char* suffix : {"", "-wal", "-shm"}) {
        std::filesystem::remove(std::string(db_path()) + suffix);
    }
    auto store = ks::Store::open(store_dir(), deferred_policy());
    ASSERT_TRUE(store.ok()) << store.error().message;
    EXPECT_FALSE(store->get_hot(sample_fields(1)));
    EXPECT_TRUE(hot_copies(store_dir()).empty());

    // Another program's SQLite file put in its place is refused, stamp or not.
    ASSERT_TRUE(store->put(sample_fields(2), binary_like(8 * 1024, 2), test_provenance()).ok());
    for (const char* suffix : {"", "-wal", "-shm"}) {
        std::filesystem::remove(std::string(db_path()) + suffix);
    }
    kcache::test::raw_sql(db_path(), "CREATE TABLE other(x)");
    auto foreign = ks::Store::open(store_dir(), deferred_policy());
    ASSERT_FALSE(foreign.ok());
    EXPECT_EQ(foreign.error().code, ks::StoreErrc::foreign);
}

TEST_F(Store, ReadersOfHotCopiesSeeAWholeEntryOrNoneWhileOthersReplaceAndRemove) {
    const auto a = binary_like(32 * 1024, 11);
    const auto b = binary_like(32 * 1024, 12);
    auto writer = open_store();  // two connections, as two processes have
    auto reader = open_store();
    std::atomic<bool> done{false};
    std::atomic<int> seen{0}, wrong{0};
    std::thread read([&] {
        while (!done) {
            if (auto got = reader.get_hot(sample_fields(1))) {
                ++seen;
                if (*got != a && *got != b) {
                    ++wrong;
                }
            }
        }
    });
    // At least 150 rounds, and on until the reader has overlapped a copy (a
    // loaded machine may not run its thread at all during the first ones).
    for (int i = 0; i < 150 || (seen == 0 && i < 20000); ++i) {
        ASSERT_TRUE(
            writer.put(sample_fields(1), i % 2 ? a : b, test_provenance(), ks::PutMode::replace)
                .ok());
        if (i % 3 == 0) {
            ASSERT_TRUE(writer.remove(ks::make_key(sample_fields(1))).ok());
        }
    }
    // The last state is a put, whichever round the loop stopped at.
    ASSERT_TRUE(writer.put(sample_fields(1), a, test_provenance(), ks::PutMode::replace).ok());
    done = true;
    read.join();
    EXPECT_EQ(wrong, 0);
    EXPECT_GT(seen, 0) << "the reader never overlapped a copy";
    auto last = writer.get(sample_fields(1));
    ASSERT_TRUE(last.ok());
    auto hot = reader.get_hot(sample_fields(1));
    ASSERT_TRUE(hot) << "the last put's copy is gone";
    EXPECT_TRUE(*hot == last->bytes);
}

TEST_F(Store, ADeferredOpenReportsWhatItFindsAtTheFirstNeed) {
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(8 * 1024, 1), test_provenance()).ok());
    }
    auto store = ks::Store::open(store_dir(), deferred_policy());
    ASSERT_TRUE(store.ok()) << store.error().message;
    // A newer kcache migrated the file in place after this open.
    kcache::test::raw_sql(db_path(), "UPDATE schema_version SET version = 99");
    auto got = store->get(sample_fields(1));
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().reason, ks::MissReason::io_error);
    EXPECT_NE(got.error().detail.find("newer"), std::string::npos) << got.error().detail;
    auto put = store->put(sample_fields(2), binary_like(8 * 1024, 2), test_provenance());
    ASSERT_FALSE(put.ok());
    EXPECT_EQ(put.error().code, ks::StoreErrc::schema_too_new);
    // Found newer: its copies no longer answer, and the next open refuses
    // the file at once.
    EXPECT_FALSE(store->get_hot(sample_fields(1)));
    auto again = ks::Store::open(store_dir(), deferred_policy());
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().code, ks::StoreErrc::schema_too_new);
}
