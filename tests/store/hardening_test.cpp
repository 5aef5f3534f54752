// Files the store must not trust: a foreign or empty SQLite file where the
// store belongs, directories above the store that others could replace,
// schema migration of failure records, and packs opened defensively.

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "sqlite.hpp"
#include "store_fixture.hpp"

using kcache::test::binary_like;
using kcache::test::file_bytes;
using kcache::test::kNobody;
using kcache::test::raw_sql;
using kcache::test::sample_fields;
using kcache::test::test_provenance;
namespace fs = std::filesystem;

namespace {

void expect_foreign(const fs::path& dir, const fs::path& db) {
    const std::string before = file_bytes(db);
    for (auto mode : {ks::OpenMode::read_write, ks::OpenMode::read_only}) {
        ks::Policy policy;
        policy.mode = mode;
        auto store = ks::Store::open(dir, policy);
        ASSERT_FALSE(store.ok()) << "adopted " << db;
        EXPECT_EQ(store.error().code, ks::StoreErrc::foreign) << store.error().message;
        EXPECT_NE(store.error().message.find(db.string()), std::string::npos);
        EXPECT_EQ(store.error().message.find("writable"), std::string::npos)
            << "must not advise writing into it: " << store.error().message;
        EXPECT_EQ(file_bytes(db), before) << "the foreign file was changed";
    }
}

}  // namespace

TEST_F(Store, ForeignSqliteFileIsNeverAdopted) {
    fs::create_directories(store_dir());
    ASSERT_EQ(::chmod(store_dir().c_str(), 0700), 0);
    raw_sql(db_path(), "CREATE TABLE notes(text); INSERT INTO notes VALUES ('mine')");
    expect_foreign(store_dir(), db_path());
    EXPECT_EQ(raw_sql(db_path(), "SELECT group_concat(name) FROM sqlite_master"), "notes");
}

TEST_F(Store, EmptyFileIsNeverAdopted) {
    fs::create_directories(store_dir());
    ASSERT_EQ(::chmod(store_dir().c_str(), 0700), 0);
    { std::ofstream touch(db_path()); }
    expect_foreign(store_dir(), db_path());
    EXPECT_EQ(fs::file_size(db_path()), 0u);
}

TEST_F(Store, ANewStoreAppearsOnlyWithItsSchema) {
    { auto store = open_store(); }
    EXPECT_EQ(raw_sql(db_path(), "SELECT version FROM schema_version"), "3");
    for (const auto& e : fs::directory_iterator(store_dir())) {
        EXPECT_EQ(e.path().filename().string().find(".new-"), std::string::npos)
            << "left behind: " << e.path();
    }
}

TEST_F(Store, TimeoutRecordsHoldBackOnlyRequestsWithoutALargerBudget) {
    auto store = open_store();
    const ks::Key key = ks::make_key(sample_fields(1));
    ASSERT_TRUE(store.record_failure(key, ks::FailureKind::timeout, "deadline", 2000).ok());
    auto same = store.find_fresh_failure(key, 2000);
    ASSERT_TRUE(same.ok() && same->has_value());
    EXPECT_EQ((*same)->budget_ms, 2000);
    EXPECT_TRUE(store.find_fresh_failure(key, 1000)->has_value());
    EXPECT_FALSE(store.find_fresh_failure(key, 600'000)->has_value()) << "a larger budget retries";
    // Failing again under the larger budget raises the bar.
    ASSERT_TRUE(store.record_failure(key, ks::FailureKind::timeout, "again", 600'000).ok());
    EXPECT_TRUE(store.find_fresh_failure(key, 600'000)->has_value());
    // Other kinds do not depend on the budget.
    const ks::Key crashed = ks::make_key(sample_fields(2));
    ASSERT_TRUE(store.record_failure(crashed, ks::FailureKind::crash, "SIGSEGV", 10).ok());
    EXPECT_TRUE(store.find_fresh_failure(crashed, 600'000)->has_value());
    auto all = store.list_failures();
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->size(), 2u);
    EXPECT_EQ(store.clear_all_failures().value(), 2u);
    EXPECT_TRUE(store.list_failures()->empty());
}

TEST_F(Store, SchemaTwoIsMigratedAndItsTimeoutsNoLongerPoison) {
    const ks::Key key = ks::make_key(sample_fields(1));
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(3000, 1), test_provenance()).ok());
        ASSERT_TRUE(store.record_failure(key, ks::FailureKind::timeout, "old", 0).ok());
    }
    raw_sql(db_path(),
            "ALTER TABLE failures DROP COLUMN budget_ms; UPDATE schema_version SET version = 2");
    auto store = open_store();
    EXPECT_EQ(raw_sql(db_path(), "SELECT version FROM schema_version"), "3");
    auto records = store.list_failures();
    ASSERT_TRUE(records.ok());
    ASSERT_EQ(records->size(), 1u);
    EXPECT_EQ(records->front().budget_ms, 0);
    EXPECT_TRUE(store.get(sample_fields(1)).ok());
    // A record of unknown budget holds back no request that names one.
    EXPECT_FALSE(store.find_fresh_failure(key, 1000)->has_value());
}

TEST_F(Store, RefusesAStoreUnderADirectoryOthersCouldReplace) {
    const fs::path parent = dir() / "shared";
    fs::create_directories(parent);
    const fs::path cache = parent / "kcache";
    ASSERT_EQ(::chmod(parent.c_str(), 0777), 0);
    auto open_writable = ks::Store::open(cache);
    ASSERT_FALSE(open_writable.ok()) << "accepted under a world-writable parent";
    EXPECT_EQ(open_writable.error().code, ks::StoreErrc::unsafe_directory);
    EXPECT_NE(open_writable.error().message.find("chmod o-w " + parent.string()), std::string::npos)
        << open_writable.error().message;
    EXPECT_FALSE(fs::exists(cache)) << "nothing is created under an unsafe parent";
    ASSERT_EQ(::chmod(parent.c_str(), 01777), 0);  // sticky, like /tmp: fine
    EXPECT_TRUE(ks::Store::open(cache).ok());
    if (::geteuid() != 0) {
        GTEST_SKIP() << "the foreign-owner case changes ownership and needs root (CI runs as root)";
    }
    ASSERT_EQ(::chmod(parent.c_str(), 0755), 0);
    ASSERT_EQ(::chown(parent.c_str(), kNobody, kNobody), 0);
    auto foreign = ks::Store::open(cache);
    ASSERT_FALSE(foreign.ok()) << "accepted under a parent owned by another user";
    EXPECT_NE(foreign.error().message.find("owned by uid 65534"), std::string::npos)
        << foreign.error().message;
}

TEST_F(Store, UntrustedFilesOpenWithSqliteDefencesOn) {
    raw_sql(dir() / "p.sqlite", "CREATE TABLE t(x); INSERT INTO t VALUES (1)");
    auto db = ks::sql::Db::open_untrusted(ks::sql::file_uri((dir() / "p.sqlite").string(), ""));
    ASSERT_TRUE(db.ok()) << db.error().message;
    EXPECT_EQ(db->query_int("PRAGMA trusted_schema").value(), 0);
    EXPECT_EQ(db->query_int("PRAGMA cell_size_check").value(), 1);
    EXPECT_EQ(db->query_int("PRAGMA query_only").value(), 1);
    int defensive = -1;
    ASSERT_EQ(sqlite3_db_config(db->get(), SQLITE_DBCONFIG_DEFENSIVE, -1, &defensive), SQLITE_OK);
    EXPECT_EQ(defensive, 1);
    EXPECT_FALSE(db->exec("INSERT INTO t VALUES (2)").ok());
    EXPECT_EQ(raw_sql(dir() / "p.sqlite", "SELECT count(*) FROM t"), "1");
}

TEST_F(Store, ALinkToAMissingFileWhereTheStoreBelongsIsAClearErrorAndCreatesNothing) {
    fs::create_directories(store_dir());
    ASSERT_EQ(::chmod(store_dir().c_str(), 0700), 0);
    const fs::path target = store_dir() / "elsewhere.sqlite";
    fs::create_symlink(target, db_path());
    auto store = ks::Store::open(store_dir(), {});
    ASSERT_FALSE(store.ok());
    EXPECT_NE(store.error().message.find(db_path().string()), std::string::npos)
        << store.error().message;
    EXPECT_FALSE(fs::exists(target)) << "an empty database was left at the link's target";
}

// Another program moves the store away and back while this one opens it: no
// open may leave an empty database where the store belongs (every later open
// would refuse it as not kcache's).
TEST_F(Store, AStoreMovedAwayWhileOpeningIsNeverReplacedByAnEmptyFile) {
    { auto created = open_store(); }
    const fs::path aside = store_dir() / "aside.sqlite";
    std::atomic<bool> stop{false};
    std::thread mover([&] {
        while (!stop.load()) {
            std::error_code ec;
            fs::rename(db_path(), aside, ec);
            fs::rename(aside, db_path(), ec);
        }
    });
    int foreign = 0;
    for (int i = 0; i < 300 && foreign == 0; ++i) {
        auto store = ks::Store::open(store_dir(), {});
        if (!store.ok() && store.error().code == ks::StoreErrc::foreign) {
            ++foreign;
            ADD_FAILURE() << store.error().message;
        }
    }
    stop = true;
    mover.join();
    EXPECT_EQ(foreign, 0);
}
