// A store closed before its deferred SQLite connection opened (a process
// that only hit hot copies) hands its write-back over in a file beside the
// copies instead of opening SQLite at the close; the next writable open
// takes every such file in once, writes it back and removes it; a file that
// is not one is removed with a warning; one claimed by a process that died
// is taken too; a full directory makes the close write back through SQLite.

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "hot/handover.hpp"
#include "hot/hot_copies.hpp"
#include "store_fixture.hpp"

using kcache::test::binary_like;
using kcache::test::deferred_policy;
using kcache::test::LogCapture;
using kcache::test::raw_sql;
using kcache::test::sample_fields;
using kcache::test::test_provenance;

namespace {

namespace fs = std::filesystem;

class StoreHandover : public Store {
  protected:
    void SetUp() override {
        Store::SetUp();
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(16 * 1024, 1), test_provenance()).ok());
    }
    fs::path hot_dir() const { return ks::hot::stamped_dir(store_dir(), db_path()); }
    // Files of `hot_dir()` whose names start with `prefix`.
    std::size_t files(const std::string& prefix) const {
        std::size_t n = 0;
        for (const auto& e : fs::directory_iterator(hot_dir())) {
            n += e.path().filename().string().rfind(prefix, 0) == 0 ? 1 : 0;
        }
        return n;
    }
    std::string hits_of_entry() const {
        return raw_sql(db_path(), "SELECT hit_count FROM entries WHERE key = '" +
                                      ks::make_key(sample_fields(1)).hex() + "'");
    }
    std::string hits_counted() const {
        return raw_sql(db_path(),
                       "SELECT coalesce(sum(value), 0) FROM counters WHERE name = 'hits'");
    }
    // One process's first hit from the copy, then its close.
    void hit_before_the_database_opens() {
        auto store = ks::Store::open(store_dir(), deferred_policy());
        ASSERT_TRUE(store.ok()) << store.error().message;
        EXPECT_TRUE(store->get_hot(sample_fields(1)));
    }
    void write(const std::string& name, const std::string& text) const {
        std::ofstream(hot_dir() / name, std::ios::binary) << text;
    }
};

}  // namespace

TEST_F(StoreHandover, AHitBeforeTheDatabaseOpensIsWrittenBackByTheNextOpen) {
    const std::string entry_before = hits_of_entry();
    const std::string counted_before = hits_counted();
    hit_before_the_database_opens();
    EXPECT_EQ(files("writeback-"), 1u) << "handed over, not written through SQLite";
    EXPECT_EQ(hits_of_entry(), entry_before);
    {
        auto store = open_store();
        EXPECT_EQ(files("writeback-"), 0u) << "taken in by the open";
    }
    EXPECT_EQ(std::stoull(hits_of_entry()), std::stoull(entry_before) + 1);
    EXPECT_EQ(std::stoull(hits_counted()), std::stoull(counted_before) + 1);
    {
        auto again = open_store();  // taken once: nothing more to add
    }
    EXPECT_EQ(std::stoull(hits_of_entry()), std::stoull(entry_before) + 1);
}

TEST_F(StoreHandover, HandoversOfSeveralProcessesAddUpAndADeferredOpenTakesThemToo) {
    const std::string before = hits_of_entry();
    hit_before_the_database_opens();
    hit_before_the_database_opens();
    hit_before_the_database_opens();
    EXPECT_EQ(files("writeback-"), 3u);
    {
        auto store = ks::Store::open(store_dir(), deferred_policy());
        ASSERT_TRUE(store.ok());
        ASSERT_TRUE(store->stats().ok());  // a need that opens the connection
        EXPECT_EQ(files("writeback-"), 0u);
    }
    EXPECT_EQ(std::stoull(hits_of_entry()), std::stoull(before) + 3);
}

TEST_F(StoreHandover, ACopyHandedOverIsCheckedAgainstItsEntryAtTheNextOpen) {
    const auto copies = kcache::test::hot_copies(store_dir());
    ASSERT_EQ(copies.size(), 1u);
    raw_sql(db_path(),
            "DELETE FROM entries WHERE key = '" + ks::make_key(sample_fields(1)).hex() + "'");
    hit_before_the_database_opens();  // served by the copy, checked later
    ASSERT_TRUE(fs::exists(copies.front()));
    LogCapture log;
    auto store = open_store();
    EXPECT_FALSE(fs::exists(copies.front())) << "the copy without its entry is removed";
    EXPECT_TRUE(log.contains("has no entry"));
}

TEST_F(StoreHandover, AFileThatIsNoHandoverIsRemovedWithAWarningAndLosesNothingElse) {
    const std::string before = hits_of_entry();
    const std::string counted = hits_counted();
    hit_before_the_database_opens();
    write("writeback-1-1", "not a write-back\n");
    write("writeback-1-2",
          "kcache write-back 1\nhit " + ks::make_key(sample_fields(1)).hex() + " 17");  // cut short
    write("writeback-1-3", "kcache write-back 1\ncount miss 99 1\n");
    write("elsewhere", "kcache write-back 1\ncount hits 1000\n");
    fs::create_symlink(hot_dir() / "elsewhere", hot_dir() / "writeback-1-4");
    write("writeback-1-5.tmp.Ab12Cd", "kcache write-back 1\ncount hits 1000\n");  // being written
    LogCapture log;
    { auto store = open_store(); }
    EXPECT_EQ(files("writeback-"), 2u) << "only the link and the file being written are left";
    EXPECT_EQ(files("claimed-"), 0u);
    EXPECT_TRUE(log.contains("not one kcache wrote")) << "each is reported";
    EXPECT_EQ(std::stoull(hits_counted()), std::stoull(counted) + 1)
        << "neither the link's target nor the unfinished file read";
    EXPECT_EQ(std::stoull(hits_of_entry()), std::stoull(before) + 1) << "the good one counts";
}

TEST_F(StoreHandover, AFileClaimedByAProcessThatDiedIsTakenAndOneOfALiveProcessIsLeft) {
    const pid_t child = ::fork();
    if (child == 0) {
        ::_exit(0);
    }
    ASSERT_GT(child, 0);
    ::waitpid(child, nullptr, 0);  // its pid names no process now
    const std::string before = hits_of_entry();
    const std::string hit =
        "kcache write-back 1\nhit " + ks::make_key(sample_fields(1)).hex() + " 1 5\ncount hits 5\n";
    write("claimed-" + std::to_string(child) + "-writeback-9-9", hit);
    write("claimed-" + std::to_string(::getppid()) + "-writeback-9-8", hit);
    { auto store = open_store(); }
    EXPECT_EQ(std::stoull(hits_of_entry()), std::stoull(before) + 5);
    EXPECT_EQ(files("claimed-" + std::to_string(::getppid())), 1u) << "a live reader's own";
}

TEST_F(StoreHandover, AFullDirectoryMakesTheCloseWriteBackThroughTheDatabase) {
    for (std::size_t i = 0; i < ks::hot::kMaxHandovers; ++i) {
        write("writeback-1-" + std::to_string(i), "kcache write-back 1\ncount hits 0\n");
    }
    const std::string before = hits_of_entry();
    hit_before_the_database_opens();
    EXPECT_EQ(files("writeback-"), 0u) << "the close opened SQLite, which took them all";
    EXPECT_EQ(std::stoull(hits_of_entry()), std::stoull(before) + 1);
}

TEST_F(StoreHandover, AReadOnlyStoreHandsNothingOver) {
    ks::Policy p = deferred_policy();
    p.mode = ks::OpenMode::read_only;
    {
        auto store = ks::Store::open(store_dir(), p);
        ASSERT_TRUE(store.ok());
        (void)store->get_hot(sample_fields(1));
    }
    EXPECT_EQ(files("writeback-"), 0u);
}

TEST(StoreHandoverText, ReadsBackWhatItWrites) {
    ks::hot::Handover h;
    h.hits.push_back({std::string(64, 'a'), 1234, 3});
    h.copies.emplace_back(std::string(64, 'b'), std::nullopt);
    h.copies.emplace_back(std::string(64, 'c'), ks::Checksum{1, 2, 3});
    h.counts.hits = 3;
    h.counts.misses[2] = 7;
    auto back = ks::hot::parse_handover(ks::hot::handover_text(h));
    ASSERT_TRUE(back);
    ASSERT_EQ(back->hits.size(), 1u);
    EXPECT_EQ(back->hits[0].key_hex, std::string(64, 'a'));
    EXPECT_EQ(back->hits[0].last_use, 1234);
    EXPECT_EQ(back->hits[0].hits, 3u);
    ASSERT_EQ(back->copies.size(), 2u);
    EXPECT_FALSE(back->copies[0].second);
    EXPECT_EQ(back->copies[1].second, (ks::Checksum{1, 2, 3}));
    EXPECT_EQ(back->counts.hits, 3u);
    EXPECT_EQ(back->counts.misses[2], 7u);
    for (const char* bad :
         {"", "kcache write-back 1", "kcache write-back 2\n", "kcache write-back 1\nhit zz 1 1\n",
          "kcache write-back 1\ncount hits -1\n", "kcache write-back 1\ncopy aaaa -\n"}) {
        EXPECT_FALSE(ks::hot::parse_handover(bad)) << bad;
    }
}
