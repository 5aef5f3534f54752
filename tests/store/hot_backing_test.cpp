// A hot copy answers only while its entry holds the same bytes: a copy left
// without its entry (an entry lost or deleted by another program), one that
// differs from its entry, or a damaged one is removed, not served; and a
// damaged copy is replaced.

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "hot/hot_copies.hpp"
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

// The secret that tags the copies of `store_dir`'s store file: what this
// store writes with, so that a copy made here differs only in its bytes.
ks::hot::Secret secret_of(const std::filesystem::path& store_dir) {
    ks::hot::Secret secret{};
    EXPECT_FALSE(ks::hot::stamped_dir(store_dir, store_dir / ks::kStoreFileName, &secret).empty());
    return secret;
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

TEST_F(Store, ADeferredConnectionOpensInTheBackgroundAndFindsAnEntryWithoutItsCopy) {
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(16 * 1024, 1), test_provenance()).ok());
    }
    std::filesystem::remove(copy_path(store_dir(), sample_fields(1)));
    const std::filesystem::path shm =
        db_path().string() + "-shm";  // SQLite's, while a connection is open
    ASSERT_FALSE(std::filesystem::exists(shm));
    auto store = ks::Store::open(store_dir(), deferred_policy());
    ASSERT_TRUE(store.ok()) << store.error().message;
    EXPECT_FALSE(std::filesystem::exists(shm)) << "deferred: no connection yet";
    store->open_in_background();
    store->open_in_background();  // a second call changes nothing
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!std::filesystem::exists(shm) && std::chrono::steady_clock::now() < end) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_TRUE(std::filesystem::exists(shm)) << "opened before anything needed it";
    EXPECT_FALSE(store->get_hot(sample_fields(1)));  // no copy: the entry is SQLite's
    auto hit = store->get(sample_fields(1));
    ASSERT_TRUE(hit.ok()) << hit.error().detail;
    EXPECT_EQ(hit->bytes, binary_like(16 * 1024, 1));
    EXPECT_EQ(store->get(sample_fields(2)).error().reason, ks::MissReason::not_found);

    // Closed while the background open may still run: joined, nothing lost.
    auto closing = ks::Store::open(store_dir(), deferred_policy());
    ASSERT_TRUE(closing.ok());
    closing->open_in_background();
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
        ks::hot::write(copy.parent_path(), secret_of(store_dir()), ks::make_key(sample_fields(1)),
                       serialized, other, ks::checksum_of(other), 1ull << 30, tally);
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
        // Removed under the write lock only: a writer may rename a new
        // copy over the name meanwhile.
        EXPECT_TRUE(std::filesystem::exists(copy)) << "removed without the write lock";
        ASSERT_TRUE(store->get(sample_fields(1)).ok());
    }  // the write-back of the hit removes it and writes the copy again
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

TEST_F(Store, CheckingHotCopiesRemovesEveryBadOneAndHitsWriteThemAgain) {
    {
        auto store = open_store();
        for (int i = 1; i <= 4; ++i) {
            ASSERT_TRUE(
                store.put(sample_fields(i), binary_like(16 * 1024, i), test_provenance()).ok());
        }
    }
    const auto dir = copy_path(store_dir(), sample_fields(1)).parent_path();
    // 1: damaged; 2: without its entry; 3: another entry's bytes; 4: sound.
    {
        std::fstream f(dir / ks::make_key(sample_fields(1)).hex(),
                       std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(-1, std::ios::end);
        f.put('\x7f');
    }
    delete_row(db_path(), sample_fields(2));
    const auto other = binary_like(16 * 1024, 99);
    ks::hot::Tally tally;
    ks::hot::write(dir, secret_of(store_dir()), ks::make_key(sample_fields(3)),
                   ks::serialize_key_fields(sample_fields(3)), other, ks::checksum_of(other),
                   1ull << 30, tally);

    auto store = open_store();
    auto checked = store.check_hot_copies();
    ASSERT_TRUE(checked.ok()) << checked.error().message;
    EXPECT_EQ(checked->checked, 4u);
    EXPECT_EQ(checked->removed, 3u);
    EXPECT_EQ(hot_copies(store_dir()).size(), 1u);
    // The sound entries get theirs again from their next hit's write-back.
    for (int i : {1, 3, 4}) {
        ASSERT_TRUE(store.get(sample_fields(i)).ok());
    }
    ASSERT_TRUE(store.flush().ok());
    EXPECT_EQ(hot_copies(store_dir()).size(), 3u);
    auto again = store.check_hot_copies();
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->removed, 0u);
    EXPECT_TRUE(store.get_hot(sample_fields(3)) == binary_like(16 * 1024, 3));
}

TEST_F(Store, VerifyRemovesTheTemporaryFilesOfWritersThatStopped) {
    auto store = open_store();
    ASSERT_TRUE(store.put(sample_fields(1), binary_like(16 * 1024, 1), test_provenance()).ok());
    const auto dir = hot_copies(store_dir()).front().parent_path();
    const pid_t child = ::fork();
    if (child == 0) {
        ::_exit(0);
    }
    ASSERT_GT(child, 0);
    ::waitpid(child, nullptr, 0);  // its pid names no process now
    const std::string key = ks::make_key(sample_fields(1)).hex();
    const auto make = [&](const std::string& name, bool old) {
        std::ofstream(dir / name) << "partial";
        if (old) {  // an hour ago
            const timespec times[2] = {{std::time(nullptr) - 3600, 0},
                                       {std::time(nullptr) - 3600, 0}};
            ASSERT_EQ(::utimensat(AT_FDCWD, (dir / name).c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
        }
    };
    make(key + ".tmp-" + std::to_string(child), false);       // its writer is gone
    make(key + ".tmp-" + std::to_string(::getpid()), false);  // its writer is this process
    make("writeback-1-2.tmp.AbCdEf", true);                   // an hour old
    make("writeback-1-3.tmp.GhIjKl", false);                  // being written
    std::ofstream(store_dir() / "outside") << "not the store's";
    std::filesystem::create_symlink(store_dir() / "outside", dir / "writeback-1-4.tmp.MnOpQr");
    const timespec old_link[2] = {{std::time(nullptr) - 3600, 0}, {std::time(nullptr) - 3600, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "writeback-1-4.tmp.MnOpQr").c_str(), old_link,
                          AT_SYMLINK_NOFOLLOW),
              0);

    auto checked = store.check_hot_copies();
    ASSERT_TRUE(checked.ok()) << checked.error().message;
    EXPECT_EQ(checked->checked, 1u);
    EXPECT_EQ(checked->removed, 0u);
    EXPECT_EQ(checked->leftovers, 3u);
    EXPECT_FALSE(std::filesystem::exists(dir / (key + ".tmp-" + std::to_string(child))));
    EXPECT_TRUE(std::filesystem::exists(dir / (key + ".tmp-" + std::to_string(::getpid()))));
    EXPECT_FALSE(std::filesystem::exists(dir / "writeback-1-2.tmp.AbCdEf"));
    EXPECT_TRUE(std::filesystem::exists(dir / "writeback-1-3.tmp.GhIjKl"));
    EXPECT_FALSE(std::filesystem::is_symlink(dir / "writeback-1-4.tmp.MnOpQr"));
    EXPECT_TRUE(std::filesystem::exists(store_dir() / "outside")) << "a link's target stays";
    EXPECT_TRUE(store.get_hot(sample_fields(1)) == binary_like(16 * 1024, 1));
}

TEST_F(Store, ACraftedHugeCopyCostsNoProcessItsSize) {
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(16 * 1024, 1), test_provenance()).ok());
    }
    const auto copy = copy_path(store_dir(), sample_fields(1));
    // A copy whose header claims 1 GiB (a sparse file: no disk needed).
    std::string head = kcache::test::file_bytes(copy).substr(0, 40);
    const std::uint64_t raw = 1ull << 30;
    for (int i = 0; i < 8; ++i) {
        head[16 + i] = static_cast<char>((raw >> (8 * i)) & 0xff);
    }
    const std::string key = ks::serialize_key_fields(sample_fields(1));
    std::ofstream(copy, std::ios::binary | std::ios::trunc) << head << key;
    std::filesystem::resize_file(copy, head.size() + key.size() + raw);

    using Clock = std::chrono::steady_clock;
    auto first_hit = ks::Store::open(store_dir(), deferred_policy());
    ASSERT_TRUE(first_hit.ok());
    auto start = Clock::now();
    EXPECT_FALSE(first_hit->get_hot(sample_fields(1)));
    EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(200)) << "over the copies' bound";
    auto store = open_store();
    start = Clock::now();
    EXPECT_FALSE(store.get_hot(sample_fields(1)));
    EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(200)) << "over its entry's size";
    EXPECT_FALSE(std::filesystem::exists(copy)) << "not its entry's copy: removed";
}

// An entry imported from a pack is loaded only after its check on this node
// (the service asks trusted_without_check): no copy is written for it, and a
// copy it has (an older kcache wrote them) is removed, not served.
TEST_F(Store, AnImportedEntryNotCheckedHereHasNoCopyThatAnswers) {
    auto store = open_store();
    ks::Provenance imported = test_provenance();
    imported.origin = ks::Origin::imported;
    ASSERT_TRUE(store.put(sample_fields(1), binary_like(16 * 1024, 1), imported).ok());
    EXPECT_TRUE(hot_copies(store_dir()).empty());
    EXPECT_TRUE(store.get(sample_fields(1)).ok());
    ASSERT_TRUE(store.flush().ok());
    EXPECT_TRUE(hot_copies(store_dir()).empty()) << "not made at the write-back either";

    ASSERT_TRUE(store.put(sample_fields(2), binary_like(16 * 1024, 2), test_provenance()).ok());
    const auto copy = copy_path(store_dir(), sample_fields(2));
    ASSERT_TRUE(std::filesystem::exists(copy));
    raw_sql(db_path(), "UPDATE entries SET origin = 2 WHERE key = '" +
                           ks::make_key(sample_fields(2)).hex() + "'");
    EXPECT_FALSE(store.get_hot(sample_fields(2)));
    EXPECT_FALSE(std::filesystem::exists(copy));

    // Its known-answer test passed here: then it may have a copy.
    ASSERT_TRUE(store.set_verified(ks::make_key(sample_fields(1)), ks::Verification::passed).ok());
    EXPECT_TRUE(store.get(sample_fields(1)).ok());
    ASSERT_TRUE(store.flush().ok());
    EXPECT_TRUE(store.get_hot(sample_fields(1)));
}
