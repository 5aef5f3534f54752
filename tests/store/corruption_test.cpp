// Damage on disk, edited with SQLite directly or by truncating the file:
// every case is a typed miss or a recovered store, never a crash.

#include <fstream>
#include <random>
#include <span>

#include "kcache/store/codec.hpp"
#include "store_fixture.hpp"

using kcache::test::binary_like;
using kcache::test::file_bytes;
using kcache::test::LogCapture;
using kcache::test::raw_blob;
using kcache::test::raw_sql;
using kcache::test::raw_sql_blob;
using kcache::test::sample_fields;
using kcache::test::test_provenance;

namespace {

// Puts entry 1 (zstd-compressed, or raw when `compressible` is false), closes
// the store, lets `damage` edit the file, then expects a quarantined Corrupt
// miss and a working re-put.
template <class Damage>
void expect_corrupt_then_recovered(Store& t, const std::filesystem::path& db_path,
                                   bool compressible, Damage damage) {
    ks::Bytes bytes = binary_like(64 * 1024, 11);
    if (!compressible) {
        std::mt19937_64 rng(3);
        for (auto& b : bytes) {
            b = static_cast<std::uint8_t>(rng());
        }
    }
    {
        auto store = t.open_store_for_test();
        ASSERT_TRUE(store.put(sample_fields(1), bytes, test_provenance()).ok());
    }
    const std::string codec = raw_sql(db_path, "SELECT codec FROM entries");
    ASSERT_EQ(codec, compressible ? "1" : "0");
    damage();
    LogCapture log;
    auto store = t.open_store_for_test();
    auto got = store.get(sample_fields(1));
    ASSERT_FALSE(got.ok()) << "damaged entry was returned";
    EXPECT_EQ(got.error().reason, ks::MissReason::corrupt) << got.error().detail;
    EXPECT_TRUE(log.contains("quarantined")) << "no log line for the quarantine";
    EXPECT_EQ(raw_sql(db_path, "SELECT count(*) FROM entries"), "0");
    EXPECT_EQ(raw_sql(db_path, "SELECT count(*) FROM blobs"), "0");
    auto stats = store.stats();
    EXPECT_EQ(stats->corruptions, 1u);
    EXPECT_EQ(stats->tiers[0].misses_for(ks::MissReason::corrupt), 1u);
    EXPECT_EQ(stats->entries, 0u);
    // A rebuild stores the entry again and it reads back intact.
    ASSERT_TRUE(store.put(sample_fields(1), bytes, test_provenance()).ok());
    auto again = store.get(sample_fields(1));
    ASSERT_TRUE(again.ok()) << again.error().detail;
    EXPECT_EQ(again->bytes, bytes);
    EXPECT_EQ(raw_sql(db_path, "PRAGMA integrity_check"), "ok");
}

}  // namespace

TEST_F(Store, FlippedByteInCompressedBlobIsCorruptMiss) {
    std::mt19937 rng(::testing::UnitTest::GetInstance()->random_seed());
    expect_corrupt_then_recovered(*this, db_path(), true, [&] {
        auto blob = raw_blob(db_path(), "SELECT data FROM blobs");
        ASSERT_FALSE(blob.empty());
        std::size_t at = rng() % blob.size();
        blob[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        raw_sql_blob(db_path(), "UPDATE blobs SET data = ?", blob);
    });
}

TEST_F(Store, FlippedByteInRawBlobIsCorruptMiss) {
    std::mt19937 rng(::testing::UnitTest::GetInstance()->random_seed());
    expect_corrupt_then_recovered(*this, db_path(), false, [&] {
        auto blob = raw_blob(db_path(), "SELECT data FROM blobs");
        blob[rng() % blob.size()] ^= 0x40;
        raw_sql_blob(db_path(), "UPDATE blobs SET data = ?", blob);
    });
}

TEST_F(Store, TruncatedBlobIsCorruptMiss) {
    expect_corrupt_then_recovered(*this, db_path(), true, [&] {
        auto blob = raw_blob(db_path(), "SELECT data FROM blobs");
        blob.resize(blob.size() / 2);
        raw_sql_blob(db_path(), "UPDATE blobs SET data = ?", blob);
    });
}

TEST_F(Store, WrongChecksumIsCorruptMiss) {
    expect_corrupt_then_recovered(*this, db_path(), true, [&] {
        raw_sql(db_path(), "UPDATE entries SET checksum = zeroblob(16)");
    });
}

TEST_F(Store, DamagedZstdFrameIsCorruptMiss) {
    expect_corrupt_then_recovered(*this, db_path(), true, [&] {
        auto blob = raw_blob(db_path(), "SELECT data FROM blobs");
        blob[0] ^= 0xff;  // the frame's magic number
        raw_sql_blob(db_path(), "UPDATE blobs SET data = ?", blob);
    });
}

TEST_F(Store, ZstdFrameWithGarbageBodyIsCorruptMiss) {
    expect_corrupt_then_recovered(*this, db_path(), true, [&] {
        auto blob = raw_blob(db_path(), "SELECT data FROM blobs");
        for (std::size_t i = 16; i < blob.size(); i += 7) {
            blob[i] = static_cast<std::uint8_t>(i * 31);
        }
        raw_sql_blob(db_path(), "UPDATE blobs SET data = ?", blob);
    });
}

// What the store's reads and the remote's payload check share: every
// damage is a `corrupt` error naming the check that failed.
TEST(StoreCodec, DecodeVerifiedRefusesEachDamageAsCorrupt) {
    const ks::Bytes raw = binary_like(64 * 1024, 5);
    const ks::Encoded enc = ks::encode(raw, 3);
    ASSERT_EQ(enc.codec, ks::Codec::zstd);
    const ks::Checksum sum = ks::checksum_of(raw);
    ASSERT_TRUE(ks::decode_verified(enc.codec, enc.data, raw.size(), sum).ok());
    ks::Checksum other = sum;
    other[0] ^= 1;
    const std::uint8_t short_sum[4] = {};
    struct Case {
        ks::Codec codec;
        std::uint64_t raw_size;
        std::span<const std::uint8_t> checksum;
        const char* named;
    };
    for (const Case& c : {Case{enc.codec, raw.size(), other, "checksum mismatch"},
                          Case{enc.codec, raw.size(), short_sum, "checksum column"},
                          Case{enc.codec, raw.size() + 1, sum, "does not declare"},
                          Case{ks::Codec::none, raw.size(), sum, "stored size"}}) {
        auto got = ks::decode_verified(c.codec, enc.data, c.raw_size, c.checksum);
        ASSERT_FALSE(got.ok()) << c.named;
        EXPECT_EQ(got.error().code, ks::StoreErrc::corrupt) << got.error().message;
        EXPECT_NE(got.error().message.find(c.named), std::string::npos) << got.error().message;
    }
}

// A row and a tiny frame that agree on an enormous size (a hostile pack can
// hold any): refused before anything that size is allocated.
TEST_F(Store, ZstdFrameDeclaringHugeSizeIsCorruptMiss) {
    const std::uint64_t declared = std::uint64_t{1} << 40;
    expect_corrupt_then_recovered(*this, db_path(), true, [&] {
        // Magic, descriptor (single segment, 8-byte content size), the size,
        // then one last RLE block of one byte.
        std::vector<std::uint8_t> frame = {0x28, 0xb5, 0x2f, 0xfd, 0xe0};
        for (int i = 0; i < 8; ++i) {
            frame.push_back(static_cast<std::uint8_t>(declared >> (8 * i)));
        }
        frame.insert(frame.end(), {0x0b, 0x00, 0x00, 0x41});
        raw_sql_blob(db_path(), "UPDATE blobs SET data = ?", frame);
        raw_sql(db_path(), "UPDATE entries SET raw_size = " + std::to_string(declared));
    });
}

TEST_F(Store, GarbageDatabaseFileIsMovedAsideAndReplaced) {
    std::filesystem::create_directories(store_dir());
    std::filesystem::permissions(store_dir(), std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace);
    std::string garbage(10000, '\0');
    for (std::size_t i = 0; i < garbage.size(); ++i) {
        garbage[i] = static_cast<char>(i * 7 + 3);
    }
    std::ofstream(db_path(), std::ios::binary) << garbage;
    LogCapture log;
    auto store = open_store();
    EXPECT_TRUE(log.contains("moved it to"));
    ASSERT_TRUE(store.put(sample_fields(1), binary_like(100, 1), test_provenance()).ok());
    EXPECT_TRUE(store.get(sample_fields(1)).ok());
    int moved = 0;
    for (const auto& e : std::filesystem::directory_iterator(store_dir())) {
        if (e.path().filename().string().rfind("store.sqlite.corrupt-", 0) == 0) {
            ++moved;
            EXPECT_EQ(file_bytes(e.path()), garbage) << "the damaged file must be kept as it was";
        }
    }
    EXPECT_EQ(moved, 1);
}

TEST_F(Store, TruncatedOrGarbageHeaderDatabaseIsMovedAside) {
    for (int variant = 0; variant < 2; ++variant) {
        std::filesystem::remove_all(store_dir());
        {
            auto store = open_store();
            for (int i = 0; i < 20; ++i) {
                ASSERT_TRUE(
                    store.put(sample_fields(i), binary_like(20'000, i), test_provenance()).ok());
            }
        }
        ASSERT_FALSE(std::filesystem::exists(db_path().string() + "-wal"));
        if (variant == 0) {
            std::filesystem::resize_file(db_path(), std::filesystem::file_size(db_path()) / 2);
        } else {
            std::fstream f(db_path(), std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(16);
            f.write("\x12\x34", 2);  // page size 0x1234: not a power of two
        }
        LogCapture log;
        auto store = open_store();
        EXPECT_TRUE(log.contains(variant == 0 ? "truncated" : "garbage header")) << variant;
        EXPECT_EQ(store.stats()->entries, 0u);
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(100, 1), test_provenance()).ok());
    }
}

TEST_F(Store, GoodStoreIsNeverMovedAside) {
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(100, 1), test_provenance()).ok());
    }
    for (int i = 0; i < 3; ++i) {
        auto store = open_store();
        EXPECT_TRUE(store.get(sample_fields(1)).ok());
    }
    for (const auto& e : std::filesystem::directory_iterator(store_dir())) {
        EXPECT_EQ(e.path().filename().string().find("corrupt"), std::string::npos) << e.path();
    }
}

TEST_F(Store, NewerSchemaIsRefusedAndLeftUntouched) {
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(100, 1), test_provenance()).ok());
    }
    raw_sql(db_path(), "UPDATE schema_version SET version = 99");
    const std::string before = file_bytes(db_path());
    for (auto mode : {ks::OpenMode::read_write, ks::OpenMode::read_only}) {
        ks::Policy policy;
        policy.mode = mode;
        auto store = ks::Store::open(store_dir(), policy);
        ASSERT_FALSE(store.ok());
        EXPECT_EQ(store.error().code, ks::StoreErrc::schema_too_new);
        EXPECT_NE(store.error().message.find(db_path().string()), std::string::npos);
        EXPECT_NE(store.error().message.find("newer"), std::string::npos);
        EXPECT_EQ(file_bytes(db_path()), before);
        for (const auto& e : std::filesystem::directory_iterator(store_dir())) {
            if (e.path().filename() == "hot") {
                continue;  // the hot copies of the earlier, successful open
            }
            if (mode == ks::OpenMode::read_write) {
                EXPECT_EQ(e.path().filename(), ks::kStoreFileName) << "left behind: " << e.path();
            } else {
                // A read-only reader cannot remove SQLite's WAL index files; they stay empty.
                EXPECT_TRUE(e.path().filename() == ks::kStoreFileName ||
                            std::filesystem::file_size(e.path()) == 0 ||
                            e.path().filename().string().ends_with("-shm"))
                    << e.path();
            }
        }
    }
}

TEST_F(Store, SchemaVersionNoKcacheWritesIsDamage) {
    // Beyond int, the version once wrapped around to 1 and was "migrated";
    // negative ones indexed the migrations out of bounds.
    for (const std::string version : {"-126", "0", "'three'", "4294967297"}) {
        std::filesystem::remove_all(store_dir());
        {
            auto store = open_store();
            ASSERT_TRUE(store.put(sample_fields(1), binary_like(100, 1), test_provenance()).ok());
        }
        raw_sql(db_path(), "UPDATE schema_version SET version = " + version);
        ks::Policy read_only;
        read_only.mode = ks::OpenMode::read_only;
        auto reader = ks::Store::open(store_dir(), read_only);
        ASSERT_FALSE(reader.ok()) << version;
        EXPECT_EQ(reader.error().code, ks::StoreErrc::corrupt) << reader.error().message;
        EXPECT_NE(reader.error().message.find("schema_version holds"), std::string::npos)
            << reader.error().message;
        LogCapture log;
        auto store = open_store();
        EXPECT_TRUE(log.contains("moved it to")) << version;
        EXPECT_EQ(store.stats()->entries, 0u) << version;
        EXPECT_EQ(raw_sql(db_path(), "SELECT version FROM schema_version"), "3");
    }
}

TEST_F(Store, OlderSchemaIsMigratedKeepingEntries) {
    const ks::Bytes bytes = binary_like(5000, 5);
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), bytes, test_provenance()).ok());
    }
    // Turn the file into a version-1 store: no verification columns, no failure budgets.
    raw_sql(db_path(),
            "ALTER TABLE entries DROP COLUMN verification;"
            "ALTER TABLE entries DROP COLUMN verified_at_ms;"
            "ALTER TABLE failures DROP COLUMN budget_ms;"
            "UPDATE schema_version SET version = 1;");
    ASSERT_EQ(raw_sql(db_path(),
                      "SELECT count(*) FROM pragma_table_info('entries') "
                      "WHERE name = 'verification'"),
              "0");
    auto store = open_store();
    EXPECT_EQ(raw_sql(db_path(), "SELECT version FROM schema_version"), "3");
    auto got = store.get(sample_fields(1));
    ASSERT_TRUE(got.ok()) << got.error().detail;
    EXPECT_EQ(got->bytes, bytes);
    EXPECT_EQ(got->info.verification, ks::Verification::unverified);
    EXPECT_TRUE(store.set_verified(got->info.key, ks::Verification::passed).value());
    EXPECT_EQ(store.get(sample_fields(1))->info.verification, ks::Verification::passed);
}

TEST_F(Store, ReadOnlyStoreReportsCorruptionWithoutWriting) {
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(9000, 1), test_provenance()).ok());
    }
    raw_sql(db_path(), "UPDATE entries SET checksum = zeroblob(16)");
    ks::Policy ro;
    ro.mode = ks::OpenMode::read_only;
    LogCapture log;
    auto store = open_store(ro);
    for (int i = 0; i < 2; ++i) {
        auto got = store.get(sample_fields(1));
        ASSERT_FALSE(got.ok());
        EXPECT_EQ(got.error().reason, ks::MissReason::corrupt);
    }
    EXPECT_TRUE(log.contains("corrupt entry"));
    EXPECT_EQ(raw_sql(db_path(), "SELECT count(*) FROM entries"), "1");  // not written
    EXPECT_EQ(store.stats()->corruptions, 2u);
}
