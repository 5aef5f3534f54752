// Put and get, provenance, idempotence, collisions, failure records, stats,
// eviction and gc on a real SQLite store.

#include <atomic>
#include <filesystem>
#include <thread>

#include "store_fixture.hpp"

using kcache::test::binary_like;
using kcache::test::raw_sql;
using kcache::test::sample_fields;
using kcache::test::test_provenance;

TEST_F(Store, PutThenGetReturnsBytesAndProvenance) {
    auto store = open_store();
    const auto bytes = binary_like(100 * 1024, 7);
    auto put = store.put(sample_fields(1), bytes, test_provenance());
    ASSERT_TRUE(put.ok()) << put.error().message;
    EXPECT_EQ(put->outcome, ks::PutOutcome::stored);
    EXPECT_EQ(put->key, ks::make_key(sample_fields(1)));

    auto got = store.get(sample_fields(1));
    ASSERT_TRUE(got.ok()) << got.error().detail;
    EXPECT_EQ(got->bytes, bytes);
    EXPECT_EQ(got->info.provenance.producer_version, "kcache-test 0.1");
    EXPECT_EQ(got->info.provenance.build_log, "build ok");
    EXPECT_EQ(got->info.provenance.build_time_ms, 1234);
    EXPECT_EQ(got->info.codec, ks::Codec::zstd);
    EXPECT_LT(got->info.stored_size, got->info.raw_size);
    EXPECT_EQ(got->info.fields, ks::normalized(sample_fields(1)));
    EXPECT_EQ(got->info.verification, ks::Verification::unverified);

    auto by_key = store.get(put->key);
    ASSERT_TRUE(by_key.ok());
    EXPECT_EQ(by_key->bytes, bytes);
    auto miss = store.get(sample_fields(2));
    ASSERT_FALSE(miss.ok());
    EXPECT_EQ(miss.error().reason, ks::MissReason::not_found);
}

TEST_F(Store, EmptyAndIncompressibleEntriesRoundTrip) {
    auto store = open_store();
    ASSERT_TRUE(store.put(sample_fields(1), ks::Bytes{}, test_provenance()).ok());
    ks::Bytes noise(4096);
    for (std::size_t i = 0; i < noise.size(); ++i) {
        noise[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 13);
    }
    ASSERT_TRUE(store.put(sample_fields(2), noise, test_provenance()).ok());
    auto empty = store.get(sample_fields(1));
    ASSERT_TRUE(empty.ok()) << empty.error().detail;
    EXPECT_TRUE(empty->bytes.empty());
    auto got = store.get(sample_fields(2));
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got->bytes, noise);
}

// Default policy: zstd level 3 with literals kept raw (they decode faster);
// zstd_compress_literals Huffman-codes them. Bytes drawn from 16 values have
// too few repeats for zstd to match but 4 bits of entropy each, so only the
// literal coding shrinks them. Entries written either way read back under
// either policy (an older store's entries keep working).
TEST_F(Store, LiteralCodingFollowsThePolicyAndBothFramesRead) {
    ks::Bytes text(64 * 1024);
    std::uint32_t x = 12345;
    for (auto& b : text) {
        x = x * 1664525u + 1013904223u;
        b = static_cast<std::uint8_t>((x >> 28) * 16 + 1);
    }
    {
        ks::Policy huffman;
        huffman.zstd_compress_literals = true;
        auto store = open_store(huffman);
        ASSERT_TRUE(store.put(sample_fields(1), text, test_provenance()).ok());
    }
    auto store = open_store();
    ASSERT_TRUE(store.put(sample_fields(2), text, test_provenance()).ok());
    auto coded = store.get(sample_fields(1));
    auto raw_literals = store.get(sample_fields(2));
    ASSERT_TRUE(coded.ok() && raw_literals.ok());
    EXPECT_EQ(coded->bytes, text);
    EXPECT_EQ(raw_literals->bytes, text);
    EXPECT_EQ(coded->info.codec, ks::Codec::zstd);
    EXPECT_LT(coded->info.stored_size * 3, text.size() * 2);  // ~4 bits a byte
    EXPECT_GT(raw_literals->info.stored_size * 10, text.size() * 9);

    // A binary-like payload still shrinks with raw literals (the LZ matches).
    const auto binary = binary_like(100 * 1024, 3);
    ASSERT_TRUE(store.put(sample_fields(3), binary, test_provenance()).ok());
    auto got = store.get(sample_fields(3));
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got->bytes, binary);
    EXPECT_LT(got->info.stored_size * 2, got->info.raw_size);
}

TEST_F(Store, EntryPointNamesWithWhitespaceAreRefused) {
    auto store = open_store();
    ks::KeyFields f = sample_fields(1);
    f.entry_points = {"conv 2d"};
    auto put = store.put(f, binary_like(10, 1), test_provenance());
    ASSERT_FALSE(put.ok());
    EXPECT_EQ(put.error().code, ks::StoreErrc::invalid_argument);
}

TEST_F(Store, SecondPutOfSameKeyKeepsTheFirst) {
    auto store = open_store();
    ASSERT_TRUE(store.put(sample_fields(1), binary_like(1000, 1), test_provenance()).ok());
    auto again = store.put(sample_fields(1), binary_like(1000, 2), test_provenance());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->outcome, ks::PutOutcome::already_present);
    EXPECT_EQ(store.get(sample_fields(1))->bytes, binary_like(1000, 1));
    auto stats = store.stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->entries, 1u);
}

// PutMode::replace swaps the entry under the key in one transaction: the
// new bytes, one entry, totals that count the new size only. With no entry
// under the key it is a plain put.
TEST_F(Store, ReplacingPutSwapsTheEntryAndKeepsTheTotals) {
    auto store = open_store();
    auto first =
        store.put(sample_fields(1), binary_like(1000, 1), test_provenance(), ks::PutMode::replace);
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_EQ(first->outcome, ks::PutOutcome::stored);
    ASSERT_TRUE(store.put(sample_fields(2), binary_like(300, 3), test_provenance()).ok());
    auto again =
        store.put(sample_fields(1), binary_like(4000, 2), test_provenance(), ks::PutMode::replace);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->outcome, ks::PutOutcome::stored);
    EXPECT_EQ(again->key, first->key);
    EXPECT_EQ(store.get(sample_fields(1))->bytes, binary_like(4000, 2));
    EXPECT_EQ(store.get(sample_fields(2))->bytes, binary_like(300, 3));
    auto stats = store.stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->entries, 2u);
    EXPECT_EQ(stats->raw_bytes, 4000u + 300u);
    EXPECT_EQ(raw_sql(db_path(), "SELECT count(*) FROM blobs"), "2");
}

TEST_F(Store, StoredFieldsDifferingFromRequestAreACollision) {
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(500, 1), test_provenance()).ok());
    }
    // Forge what a SHA-256 collision would look like: same key, other fields.
    raw_sql(db_path(), "UPDATE entries SET driver_version = 'forged'");
    auto store = open_store();
    auto got = store.get(sample_fields(1));
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().reason, ks::MissReason::collision);
    EXPECT_NE(got.error().detail.find("driver_version"), std::string::npos);
}

TEST_F(Store, ReadOnlyPolicyServesGetsAndRefusesPuts) {
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(500, 1), test_provenance()).ok());
    }
    ks::Policy ro;
    ro.mode = ks::OpenMode::read_only;
    auto store = open_store(ro);
    EXPECT_EQ(store.mode(), ks::OpenMode::read_only);
    ASSERT_TRUE(store.get(sample_fields(1)).ok());
    auto put = store.put(sample_fields(2), binary_like(10, 2), test_provenance());
    ASSERT_FALSE(put.ok());
    EXPECT_EQ(put.error().code, ks::StoreErrc::read_only);
    EXPECT_FALSE(
        store.record_failure(ks::make_key(sample_fields(2)), ks::FailureKind::crash, "x").ok());
}

TEST_F(Store, FailureRecordsCountRepeatsAndExpireLater) {
    ks::TimeMs now = 1'000'000;
    ks::Policy policy;
    policy.clock = [&now] { return now; };
    policy.failure_base_ttl_ms = 1000;
    policy.failure_max_ttl_ms = 5000;
    auto store = open_store(policy);
    const ks::Key key = ks::make_key(sample_fields(1));
    EXPECT_FALSE(store.find_fresh_failure(key)->has_value());

    auto first = store.record_failure(key, ks::FailureKind::timeout, "deadline 30 s");
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_EQ(first->count, 1u);
    EXPECT_EQ(first->expires_ms, now + 1000);
    now += 10;
    auto second = store.record_failure(key, ks::FailureKind::timeout, "deadline 30 s again");
    EXPECT_EQ(second->count, 2u);
    EXPECT_EQ(second->first_seen_ms, 1'000'000);
    EXPECT_EQ(second->expires_ms, now + 2000);
    now += 10;
    auto third = store.record_failure(key, ks::FailureKind::timeout, "again");
    EXPECT_EQ(third->expires_ms, now + 4000);
    for (int i = 0; i < 5; ++i) {
        third = store.record_failure(key, ks::FailureKind::timeout, "again");
    }
    EXPECT_EQ(third->expires_ms, now + 5000);  // capped

    auto fresh = store.find_fresh_failure(key);
    ASSERT_TRUE(fresh.ok() && fresh->has_value());
    EXPECT_EQ((*fresh)->kind, ks::FailureKind::timeout);
    EXPECT_EQ((*fresh)->detail, "again");
    now += 5001;
    EXPECT_FALSE(store.find_fresh_failure(key)->has_value());

    ASSERT_TRUE(store.record_failure(key, ks::FailureKind::crash, "SIGSEGV").ok());
    EXPECT_TRUE(store.find_fresh_failure(key)->has_value());
    EXPECT_EQ(store.clear_failures(key).value(), 2u);
    EXPECT_FALSE(store.find_fresh_failure(key)->has_value());
}

TEST_F(Store, StatsCountHitsMissesAndPersistThem) {
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(sample_fields(1), binary_like(2000, 1), test_provenance()).ok());
        ASSERT_TRUE(store.get(sample_fields(1)).ok());
        ASSERT_TRUE(store.get(sample_fields(1)).ok());
        ASSERT_FALSE(store.get(sample_fields(9)).ok());
        auto s = store.stats();
        ASSERT_TRUE(s.ok());
        ASSERT_EQ(s->tiers.size(), 1u);
        EXPECT_EQ(s->tiers[0].hits, 2u);
        EXPECT_EQ(s->tiers[0].misses_for(ks::MissReason::not_found), 1u);
        EXPECT_EQ(s->entries, 1u);
        EXPECT_EQ(s->raw_bytes, 2000u);
        EXPECT_GT(s->stored_bytes, 0u);
        EXPECT_LT(s->stored_bytes, 2000u);
    }
    auto store = open_store();
    auto s = store.stats();
    EXPECT_EQ(s->tiers[0].hits, 2u);
    EXPECT_EQ(s->tiers[0].misses_for(ks::MissReason::not_found), 1u);
    auto info = store.info(ks::make_key(sample_fields(1)));
    ASSERT_TRUE(info.ok() && info->has_value());
    EXPECT_EQ((*info)->hit_count, 2u);
}

TEST_F(Store, LastUseIsWrittenLazily) {
    ks::TimeMs now = 1'000'000;
    ks::Policy policy;
    policy.clock = [&now] { return now; };
    policy.last_use_granularity_ms = 60'000;
    auto store = open_store(policy);
    ASSERT_TRUE(store.put(sample_fields(1), binary_like(100, 1), test_provenance()).ok());
    const ks::Key key = ks::make_key(sample_fields(1));
    now += 1000;
    ASSERT_TRUE(store.get(key).ok());
    // Within the granularity nothing is written back.
    EXPECT_EQ(raw_sql(db_path(), "SELECT last_use_ms FROM entries"), "1000000");
    now += 60'000;
    ASSERT_TRUE(store.get(key).ok());
    EXPECT_EQ(raw_sql(db_path(), "SELECT last_use_ms FROM entries"), std::to_string(now));
    EXPECT_EQ(raw_sql(db_path(), "SELECT hit_count FROM entries"), "2");
}

TEST_F(Store, VerificationListRemoveAndNearest) {
    auto store = open_store();
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(store.put(sample_fields(i), binary_like(100, i), test_provenance()).ok());
    }
    const ks::Key k0 = ks::make_key(sample_fields(0));
    EXPECT_TRUE(store.set_verified(k0, ks::Verification::passed).value());
    EXPECT_EQ(store.get(k0)->info.verification, ks::Verification::passed);
    EXPECT_FALSE(
        store.set_verified(ks::make_key(sample_fields(7)), ks::Verification::failed).value());
    EXPECT_EQ(store.list()->size(), 3u);

    ks::KeyFields wanted = sample_fields(0);
    wanted.driver_version = "new driver";
    auto near = store.nearest(wanted, 2);
    ASSERT_TRUE(near.ok());
    ASSERT_EQ(near->size(), 2u);
    EXPECT_EQ((*near)[0].info.key, k0);
    EXPECT_EQ((*near)[0].differing, std::vector<std::string>{"driver_version"});
    EXPECT_EQ((*near)[1].differing.size(), 2u);  // source_digest too

    EXPECT_TRUE(store.remove(k0).value());
    EXPECT_FALSE(store.remove(k0).value());
    EXPECT_EQ(store.get(k0).error().reason, ks::MissReason::not_found);
    EXPECT_EQ(store.list()->size(), 2u);
}

TEST_F(Store, EvictionKeepsTheSizeBoundUnderChurnAndPrefersRecentlyUsed) {
    ks::TimeMs now = 1'000'000;
    ks::Policy policy;
    policy.clock = [&now] { return now; };
    policy.max_bytes = 256 * 1024;
    policy.last_use_granularity_ms = 0;  // every hit written back: exact LRU for the test
    auto store = open_store(policy);
    const ks::KeyFields hot = sample_fields(0);
    ASSERT_TRUE(store.put(hot, binary_like(20'000, 0), test_provenance()).ok());
    std::uint64_t evicted = 0;
    for (int i = 1; i <= 300; ++i) {
        now += 1;
        ASSERT_TRUE(store.get(hot).ok()) << "hot entry evicted at put " << i;
        auto put = store.put(sample_fields(i), binary_like(5'000 + 97 * i, i), test_provenance());
        ASSERT_TRUE(put.ok()) << put.error().message;
        evicted += put->evicted;
        auto s = store.stats();
        ASSERT_LE(s->stored_bytes, policy.max_bytes) << "after put " << i;
    }
    auto s = store.stats();
    EXPECT_GT(evicted, 100u);
    EXPECT_EQ(s->evictions, evicted);
    EXPECT_EQ(s->entries, store.list()->size());
    // The newest entry survives; the oldest cold ones are gone.
    EXPECT_TRUE(store.get(sample_fields(300)).ok());
    EXPECT_EQ(store.get(sample_fields(1)).error().reason, ks::MissReason::not_found);
    // An entry larger than the whole bound is refused, not stored.
    auto huge = store.put(sample_fields(999), binary_like(2 << 20, 1), test_provenance());
    ASSERT_FALSE(huge.ok());
    EXPECT_EQ(huge.error().code, ks::StoreErrc::too_large);
}

TEST_F(Store, GcRemovesUnusedEntriesAndShrinksToABound) {
    ks::TimeMs now = 1'000'000;
    ks::Policy policy;
    policy.clock = [&now] { return now; };
    auto store = open_store(policy);
    for (int i = 0; i < 10; ++i) {
        now += 1000;
        ASSERT_TRUE(store.put(sample_fields(i), binary_like(10'000, i), test_provenance()).ok());
    }
    auto r = store.gc({.unused_for_ms = 4500, .max_bytes = std::nullopt});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->removed, 5u);  // put at 1001…1010 s; cut-off 1005.5 s
    EXPECT_GT(r->freed_bytes, 0u);
    r = store.gc({.unused_for_ms = std::nullopt, .max_bytes = 0});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->removed, 5u);
    EXPECT_EQ(store.stats()->entries, 0u);
    EXPECT_EQ(raw_sql(db_path(), "PRAGMA integrity_check"), "ok");
}

TEST_F(Store, OneStoreServesManyThreads) {
    auto store = open_store();
    std::vector<std::thread> threads;
    std::atomic<int> errors{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int n = 0; n < 150; ++n) {
                const int i = (n * 7 + t) % 20;
                if ((n + t) % 3 == 0) {
                    errors +=
                        store.put(sample_fields(i), binary_like(3000 + i, i), test_provenance())
                                .ok()
                            ? 0
                            : 1;
                } else if (auto got = store.get(sample_fields(i)); got.ok()) {
                    errors += got->bytes == binary_like(3000 + i, i) ? 0 : 1;
                } else {
                    errors += got.error().reason == ks::MissReason::not_found ? 0 : 1;
                }
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    EXPECT_EQ(errors.load(), 0);
    auto s = store.stats();
    EXPECT_EQ(s->tiers[0].hits + s->tiers[0].misses_for(ks::MissReason::not_found), 4u * 100u);
}
