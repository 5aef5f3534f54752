// Slow store tests (labels store + slow): a 1,000-entry round trip, many
// processes sharing one store, and children killed with SIGKILL mid-put.

#include <signal.h>

#include <chrono>
#include <cmath>
#include <random>
#include <set>
#include <thread>

#include "child_process.hpp"
#include "store_fixture.hpp"

using kcache::test::binary_like;
using kcache::test::ChildGroup;
using kcache::test::raw_sql;
using kcache::test::sample_fields;
using kcache::test::test_provenance;
namespace kt = kcache::test;
namespace fs = std::filesystem;

class StoreSoak : public Store {};

namespace {

// Size of the payload of shared key `i` in the multi-process test.
std::size_t shared_size(int i) {
    return 1024 + static_cast<std::size_t>(i) * 1531 % 60000;
}

ks::KeyFields crash_fields(int round, int child, int seq) {
    ks::KeyFields f = sample_fields(0);
    f.source_digest = kcache::sha256_hex("crash " + std::to_string(round) + " " +
                                         std::to_string(child) + " " + std::to_string(seq));
    return f;
}

ks::Bytes crash_payload(int round, int child, int seq) {
    return binary_like(500 + static_cast<std::size_t>(seq) * 997 % 40000,
                       static_cast<std::uint64_t>(round * 1'000'003 + child * 10'007 + seq));
}

// Whether the trigger-kept totals agree with the rows (1) after every crash.
constexpr const char* kTotalsConsistent =
    "SELECT (SELECT entries FROM totals) = (SELECT count(*) FROM entries) AND "
    "(SELECT stored_bytes FROM totals) = (SELECT coalesce(sum(length(data)), 0) FROM blobs) AND "
    "(SELECT count(*) FROM blobs) = (SELECT count(*) FROM entries)";

}  // namespace

TEST_F(StoreSoak, StoreRoundTripsAThousandEntriesOfRandomSize) {
    std::mt19937_64 rng(::testing::UnitTest::GetInstance()->random_seed());
    // Sizes spread log-uniformly over 0 B … 1 MiB (so small and large both
    // occur often), plus both extremes exactly.
    std::vector<std::size_t> sizes = {0, 1 << 20};
    std::uniform_real_distribution<double> exponent(0.0, 20.0);
    while (sizes.size() < 1000) {
        sizes.push_back(static_cast<std::size_t>(std::pow(2.0, exponent(rng))) - 1);
    }
    {
        auto store = open_store();
        for (int i = 0; i < 1000; ++i) {
            auto put = store.put(sample_fields(i), binary_like(sizes[i], i), test_provenance());
            ASSERT_TRUE(put.ok()) << i << ": " << put.error().message;
            ASSERT_EQ(put->outcome, ks::PutOutcome::stored);
        }
        for (int i = 0; i < 1000; ++i) {
            auto got = store.get(sample_fields(i));
            ASSERT_TRUE(got.ok()) << i << ": " << got.error().detail;
            ASSERT_EQ(got->bytes, binary_like(sizes[i], i)) << i;
        }
    }
    auto store = open_store();  // and again after reopening
    ASSERT_EQ(store.stats()->entries, 1000u);
    for (int i = 999; i >= 0; --i) {
        auto got = store.get(sample_fields(i));
        ASSERT_TRUE(got.ok()) << i << ": " << got.error().detail;
        ASSERT_EQ(got->bytes, binary_like(sizes[i], i)) << i;
    }
    EXPECT_EQ(raw_sql(db_path(), "PRAGMA integrity_check"), "ok");
}

// Child role "shared": for 5 s, put and get random keys of a shared set.
void run_shared_child() {
    ASSERT_TRUE(kt::wait_for_start_gate());
    auto store = ks::Store::open(kt::child_env("STORE"));
    ASSERT_TRUE(store.ok()) << store.error().message;
    std::mt19937 rng(static_cast<unsigned>(kt::child_index()) * 7919u + 1);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    int puts = 0;
    int hits = 0;
    while (std::chrono::steady_clock::now() < end) {
        const int i = static_cast<int>(rng() % 40);
        if (rng() % 2 == 0) {
            auto put =
                store->put(sample_fields(i), binary_like(shared_size(i), i), test_provenance());
            ASSERT_TRUE(put.ok()) << put.error().message;
            ++puts;
        } else {
            auto got = store->get(sample_fields(i));
            if (got.ok()) {
                ASSERT_EQ(got->bytes, binary_like(shared_size(i), i)) << "key " << i;
                ++hits;
            } else {
                ASSERT_EQ(got.error().reason, ks::MissReason::not_found) << got.error().detail;
            }
        }
    }
    kt::report_line("puts " + std::to_string(puts) + " hits " + std::to_string(hits));
}

TEST_F(StoreSoak, StoreSharedByEightProcessesStaysConsistent) {
    if (kt::child_role() == "shared") {
        run_shared_child();
        return;
    }
    { auto created = open_store(); }  // children race on an existing store
    auto group = ChildGroup::spawn(8, "shared", {{"STORE", store_dir().string()}});
    group.release();
    auto results = group.wait_all(std::chrono::seconds(120));
    int total_puts = 0;
    int total_hits = 0;
    for (const auto& r : results) {
        ASSERT_TRUE(r.ok()) << r.describe();
        ASSERT_EQ(r.lines.size(), 1u) << r.describe();
        int puts = 0;
        int hits = 0;
        ASSERT_EQ(std::sscanf(r.lines[0].c_str(), "puts %d hits %d", &puts, &hits), 2);
        total_puts += puts;
        total_hits += hits;
    }
    EXPECT_GT(total_puts, 8 * 10);
    EXPECT_GT(total_hits, 8 * 10);
    auto store = open_store();
    auto all = store.list();
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->size(), 40u);  // every key was put many times: all present once
    for (int i = 0; i < 40; ++i) {
        auto got = store.get(sample_fields(i));
        ASSERT_TRUE(got.ok()) << i << ": " << got.error().detail;
        EXPECT_EQ(got->bytes, binary_like(shared_size(i), i)) << i;
    }
    EXPECT_EQ(raw_sql(db_path(), "PRAGMA integrity_check"), "ok");
    EXPECT_EQ(raw_sql(db_path(), kTotalsConsistent), "1");
}

// Child role "writer": puts new entries forever, reporting each one after
// put() has returned; the parent kills it at a random moment.
void run_writer_child() {
    const int round = std::stoi(kt::child_env("ROUND"));
    auto store = ks::Store::open(kt::child_env("STORE"));
    ASSERT_TRUE(store.ok()) << store.error().message;
    ASSERT_TRUE(kt::wait_for_start_gate());
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (int seq = 0; std::chrono::steady_clock::now() < give_up; ++seq) {
        const int child = kt::child_index();
        auto put = store->put(crash_fields(round, child, seq), crash_payload(round, child, seq),
                              test_provenance());
        ASSERT_TRUE(put.ok()) << put.error().message;
        kt::report_line(std::to_string(seq));
    }
}

TEST_F(StoreSoak, StoreKeepsEveryReturnedPutWhenWritersAreKilled) {
    if (kt::child_role() == "writer") {
        run_writer_child();
        return;
    }
    constexpr int kRounds = 50;
    constexpr int kWriters = 3;
    std::mt19937 rng(::testing::UnitTest::GetInstance()->random_seed());
    { auto created = open_store(); }
    int killed = 0;
    std::size_t confirmed = 0;
    for (int round = 0; round < kRounds; ++round) {
        auto group =
            ChildGroup::spawn(kWriters, "writer",
                              {{"STORE", store_dir().string()}, {"ROUND", std::to_string(round)}});
        group.release();
        std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 60));
        group.kill_all(SIGKILL);
        auto results = group.wait_all(std::chrono::seconds(30));
        ASSERT_EQ(raw_sql(db_path(), "PRAGMA integrity_check"), "ok") << "round " << round;
        ASSERT_EQ(raw_sql(db_path(), kTotalsConsistent), "1") << "round " << round;
        auto store = open_store();
        for (int c = 0; c < kWriters; ++c) {
            const auto& r = results[c];
            ASSERT_TRUE(r.ok() || r.signal == SIGKILL) << r.describe();
            killed += r.signal == SIGKILL ? 1 : 0;
            for (const auto& line : r.lines) {
                const int seq = std::stoi(line);
                auto got = store.get(crash_fields(round, c, seq));
                ASSERT_TRUE(got.ok()) << "round " << round << " child " << c << " seq " << seq
                                      << " returned from put() but is " << got.error().detail;
                ASSERT_EQ(got->bytes, crash_payload(round, c, seq));
                ++confirmed;
            }
        }
    }
    EXPECT_GE(killed, kRounds * kWriters * 9 / 10) << "children must die mid-run, not finish";
    EXPECT_GT(confirmed, static_cast<std::size_t>(kRounds)) << "too few puts to prove anything";
    std::printf("crash test: %d children killed, %zu returned puts verified\n", killed, confirmed);
}

TEST_F(StoreSoak, StoreCreatedByEightProcessesAtOnce) {
    if (kt::child_role() == "creator") {
        ASSERT_TRUE(kt::wait_for_start_gate());
        auto store = ks::Store::open(kt::child_env("STORE"));
        ASSERT_TRUE(store.ok()) << store.error().message;
        const int i = kt::child_index();
        auto put = store->put(sample_fields(i), binary_like(1000, i), test_provenance());
        ASSERT_TRUE(put.ok()) << put.error().message;
        return;
    }
    // No store yet: every child races to create the directory and schema.
    auto group = ChildGroup::spawn(8, "creator", {{"STORE", store_dir().string()}});
    group.release();
    for (const auto& r : group.wait_all(std::chrono::seconds(60))) {
        ASSERT_TRUE(r.ok()) << r.describe();
    }
    auto store = open_store();
    for (int i = 0; i < 8; ++i) {
        auto got = store.get(sample_fields(i));
        ASSERT_TRUE(got.ok()) << i << ": " << got.error().detail;
        EXPECT_EQ(got->bytes, binary_like(1000, i));
    }
    EXPECT_EQ(raw_sql(db_path(), "PRAGMA journal_mode"), "wal");
    EXPECT_EQ(raw_sql(db_path(), "SELECT version FROM schema_version"), "3");
}

// `kcache warm` opens an existing store read-only. A store being created by
// another process must therefore never be visible before its schema is: in
// every round, openers race creators on a fresh directory, opening read-only
// as soon as the file exists, exactly as warm decides.
TEST_F(StoreSoak, StoreIsNeverSeenWithoutItsSchemaByConcurrentOpeners) {
    if (kt::child_role() == "opener") {
        const fs::path dir = kt::child_env("STORE");
        ASSERT_TRUE(kt::wait_for_start_gate());
        const bool creator = kt::child_index() % 2 == 0;
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!creator && !fs::exists(dir / ks::kStoreFileName) &&
               std::chrono::steady_clock::now() < give_up) {
        }
        ks::Policy policy;
        policy.mode = fs::exists(dir / ks::kStoreFileName) ? ks::OpenMode::read_only
                                                           : ks::OpenMode::read_write;
        auto store = ks::Store::open(dir, policy);
        ASSERT_TRUE(store.ok()) << store.error().message;
        return;
    }
    constexpr int kRounds = 40;
    for (int round = 0; round < kRounds; ++round) {
        const fs::path dir = store_dir() / std::to_string(round);
        fs::create_directories(store_dir());
        auto group = ChildGroup::spawn(4, "opener", {{"STORE", dir.string()}});
        group.release();
        for (const auto& r : group.wait_all(std::chrono::seconds(60))) {
            ASSERT_TRUE(r.ok()) << "round " << round << ": " << r.describe();
        }
        EXPECT_EQ(raw_sql(dir / ks::kStoreFileName, "SELECT version FROM schema_version"), "3");
    }
}
