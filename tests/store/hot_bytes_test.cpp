// Store::read_hot and the memory it reads into (HotBytes): the same checks
// as get_hot before any byte is handed out, and a thread's reused memory
// held by one reader at a time.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "kcache/store/hot_bytes.hpp"
#include "store_fixture.hpp"

namespace kt = kcache::test;

namespace {

bool same(std::span<const std::uint8_t> a, const ks::Bytes& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace

TEST_F(Store, ReadHotRefusesEveryCopyGetHotRefuses) {
    auto store = open_store();
    const auto one = kt::binary_like(40 * 1024, 1);
    ASSERT_TRUE(store.put(kt::sample_fields(1), one, kt::test_provenance()).ok());
    ASSERT_TRUE(
        store.put(kt::sample_fields(2), kt::binary_like(40 * 1024, 2), kt::test_provenance()).ok());
    {
        auto read = store.read_hot(kt::sample_fields(1));
        ASSERT_TRUE(read);
        EXPECT_TRUE(same(read->bytes(), one));
        EXPECT_TRUE(read->take() == one);
    }
    const auto dir = kt::hot_copies(store_dir()).front().parent_path();
    const auto path1 = dir / ks::make_key(kt::sample_fields(1)).hex();
    const auto path2 = dir / ks::make_key(kt::sample_fields(2)).hex();
    const std::string good = kcache::test::file_bytes(path1);

    // Read before SQLite opens (a first hit: the copy's own checks alone)
    // and after (the entry's checksum too): each damage is refused by both.
    auto refused = [&](int n, const char* what) {
        auto first_hit = ks::Store::open(store_dir(), kcache::test::deferred_policy());
        ASSERT_TRUE(first_hit.ok());
        EXPECT_FALSE(first_hit->read_hot(kt::sample_fields(n))) << what << ", first hit";
        EXPECT_FALSE(store.read_hot(kt::sample_fields(n))) << what;
    };
    // Bytes damaged on disk: the checksum.
    ASSERT_EQ(kt::damage_hot_copies(store_dir()), 2u);
    refused(2, "damaged");
    // Bytes replaced, checksum recomputed, without the store's secret: the tag.
    std::ofstream(path1, std::ios::binary | std::ios::trunc) << good;
    kt::craft_hot_copy(path1, kt::binary_like(40 * 1024, 9));
    refused(1, "crafted");
    // Another key's copy under this key's name: the key record.
    std::ofstream(path2, std::ios::binary | std::ios::trunc) << good;
    refused(2, "another key's");
    // One byte short: the size its header says.
    std::ofstream(path1, std::ios::binary | std::ios::trunc) << good.substr(0, good.size() - 1);
    refused(1, "truncated");
    // The entries themselves still answer, and the sound copy again.
    EXPECT_TRUE(store.get(kt::sample_fields(1)).ok());
    std::ofstream(path1, std::ios::binary | std::ios::trunc) << good;
    auto back = store.read_hot(kt::sample_fields(1));
    ASSERT_TRUE(back);
    EXPECT_TRUE(same(back->bytes(), one));
}

TEST_F(Store, AHotReadKeepsItsBytesWhileItLives) {
    auto store = open_store();
    const auto one = kt::binary_like(64 * 1024, 1);
    const auto two = kt::binary_like(64 * 1024, 2);
    ASSERT_TRUE(store.put(kt::sample_fields(1), one, kt::test_provenance()).ok());
    ASSERT_TRUE(store.put(kt::sample_fields(2), two, kt::test_provenance()).ok());
    {
        auto first = store.read_hot(kt::sample_fields(1));
        ASSERT_TRUE(first);
        // A second read on this thread while the first lives: memory of its own.
        auto second = store.read_hot(kt::sample_fields(2));
        ASSERT_TRUE(second);
        EXPECT_TRUE(same(second->bytes(), two));
        EXPECT_TRUE(same(first->bytes(), one)) << "the second read overwrote the first";
        // Removed meanwhile: what was read stays.
        ks::GcOptions all;
        all.max_bytes = 0;
        ASSERT_TRUE(store.gc(all).ok());
        EXPECT_TRUE(same(first->bytes(), one));
    }
    // Both given back: the next read still reads what is there.
    ASSERT_TRUE(store.put(kt::sample_fields(1), one, kt::test_provenance()).ok());
    auto again = store.read_hot(kt::sample_fields(1));
    ASSERT_TRUE(again);
    EXPECT_TRUE(same(again->bytes(), one));
}

TEST(HotBytes, AThreadsMemoryIsHeldByOneReaderAtATime) {
    // Reused on one thread once given back...
    using Memory = ks::HotBytes::Memory;
    const std::uint8_t* block = nullptr;
    {
        ks::HotBytes a(100, 100 * 1024, Memory::reused);
        block = a.head().data();
    }
    {
        ks::HotBytes b(100, 90 * 1024, Memory::reused);
        EXPECT_EQ(b.head().data(), block) << "the thread's block was not reused";
        ks::HotBytes c(100, 90 * 1024, Memory::reused);
        EXPECT_NE(c.head().data(), b.head().data()) << "one block handed out twice";
        ks::HotBytes moved(std::move(c));
        EXPECT_NE(moved.head().data(), b.head().data());
        // Memory the caller keeps is never the thread's, and is moved out whole.
        ks::HotBytes kept(100, 90 * 1024, Memory::kept);
        const std::uint8_t* room = kept.room().data();
        EXPECT_NE(room, b.head().data() + 100);
        const ks::Bytes taken = kept.take();
        EXPECT_EQ(taken.data(), room);
        EXPECT_EQ(taken.size(), 90u * 1024);
    }
    // ...and never shared between threads that read at the same time.
    constexpr int kThreads = 4;
    std::vector<std::thread> threads;
    std::vector<std::vector<const std::uint8_t*>> seen(kThreads);
    std::vector<int> intact(kThreads, 1);  // one element per thread (no vector<bool>)
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([t, &seen, &intact] {
            for (int round = 0; round < 200; ++round) {
                ks::HotBytes held(0, 64 * 1024, ks::HotBytes::Memory::reused);
                auto all = held.room();
                std::fill(all.begin(), all.end(), static_cast<std::uint8_t>(t + 1));
                std::this_thread::yield();
                intact[t] =
                    intact[t] != 0 && std::all_of(all.begin(), all.end(), [t](std::uint8_t v) {
                        return v == static_cast<std::uint8_t>(t + 1);
                    });
                seen[t].push_back(all.data());
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_TRUE(intact[t]) << "thread " << t << "'s bytes were written by another";
        EXPECT_EQ(std::set<const std::uint8_t*>(seen[t].begin(), seen[t].end()).size(), 1u)
            << "thread " << t << " did not reuse its block";
    }
}

namespace {

ks::Store* g_exit_store = nullptr;
const ks::Bytes* g_exit_bytes = nullptr;

}  // namespace

// The main thread's thread_local objects are destroyed before exit handlers
// run, and a cache closed by one (the OpenCL layer's) still reads hot
// copies and decodes entries then: the thread's reused memory and zstd
// contexts must not be used after they were freed.
TEST_F(Store, HotReadsAndDecodesWorkInExitHandlers) {
    const auto bytes = kt::binary_like(64 * 1024, 1);
    {
        auto store = open_store();
        ASSERT_TRUE(store.put(kt::sample_fields(1), bytes, kt::test_provenance()).ok());
    }
    EXPECT_EXIT(
        {
            g_exit_store = new ks::Store(open_store());
            g_exit_bytes = &bytes;
            // The thread's memory and contexts, made before exit.
            if (!g_exit_store->read_hot(kt::sample_fields(1)) ||
                !g_exit_store->get(kt::sample_fields(1)).ok()) {
                std::_Exit(2);
            }
            std::atexit([] {
                auto hot = g_exit_store->read_hot(kt::sample_fields(1));
                auto got = g_exit_store->get(kt::sample_fields(1));
                const bool ok =
                    hot && hot->take() == *g_exit_bytes && got.ok() && got->bytes == *g_exit_bytes;
                std::_Exit(ok ? 0 : 3);
            });
            std::exit(1);
        },
        ::testing::ExitedWithCode(0), "");
}
