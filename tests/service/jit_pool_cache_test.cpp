// ServiceJitPool.*: the cache's JIT rung through persistent helpers: one helper serves
// a cache's compiles in turn, closing the cache stops it, and the helper is
// the one the Config names.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <thread>

#include "cache_fixture.hpp"
#include "kcache/store/store.hpp"
#include "process_probe.hpp"

namespace kcache::test {
namespace {

using ServiceJitPool = CacheTest;
using namespace std::chrono_literals;

TEST_F(ServiceJitPool, OneHelperServesTheCacheAndCloseStopsIt) {
    ASSERT_TRUE(live_children_named("kcache-jit").empty());
    auto cache = open();
    auto first = cache->program(context_, device_, scale_request(1));
    ASSERT_TRUE(first.ok()) << first.outcome().message;
    EXPECT_EQ(first.outcome().rung, Rung::jit);
    const auto after_first = live_children_named("kcache-jit");
    ASSERT_EQ(after_first.size(), 1u) << "the helper stays for the next compile";
    auto second = cache->program(context_, device_, scale_request(2));
    ASSERT_TRUE(second.ok()) << second.outcome().message;
    EXPECT_EQ(second.outcome().rung, Rung::jit);
    EXPECT_EQ(cache->stats().jit_compiles, 2u);
    EXPECT_EQ(live_children_named("kcache-jit"), after_first);
    EXPECT_FLOAT_EQ(run_scale(context_, device_, second.get(), 3.0f), 2.0f * 3.0f + 2.0f);
    cache.reset();
    EXPECT_TRUE(wait_reaped(after_first[0], 5s)) << "helper outlived the cache";
}

TEST_F(ServiceJitPool, HelpersZeroStartsAHelperPerCompile) {
    auto config = this->config();
    config.jit_helpers = 0;
    auto cache = Cache::open(config);
    ASSERT_TRUE(cache);
    auto p = cache->program(context_, device_, scale_request(3));
    ASSERT_TRUE(p.ok()) << p.outcome().message;
    EXPECT_TRUE(live_children_named("kcache-jit").empty());
}

// On a CPU device the cache asks for a warm-up launch; a pooled helper
// answers before it, and the warmed binary replaces the stored one after.
TEST_F(ServiceJitPool, TheWarmedBinaryReplacesTheStoredOneAfterTheAnswer) {
    auto cache = open();
    auto request = scale_request(6);
    request.warmup_local_size = 16;
    auto p = cache->program(context_, device_, request);
    ASSERT_TRUE(p.ok()) << p.outcome().message;
    EXPECT_EQ(p.outcome().rung, Rung::jit);
    const auto until = std::chrono::steady_clock::now() + 60s;
    while (cache->stats().warmed_later == 0 && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(cache->stats().warmed_later, 1u);
    EXPECT_EQ(cache->stats().entries, 1u);
    EXPECT_FLOAT_EQ(run_scale(context_, device_, p.get(), 3.0f), 2.0f * 3.0f + 6.0f);
    cache.reset();
    auto again = open();
    auto hit = again->program(context_, device_, request);
    ASSERT_TRUE(hit.ok()) << hit.outcome().message;
    EXPECT_EQ(hit.outcome().rung, Rung::user_store);
    EXPECT_FLOAT_EQ(run_scale(context_, device_, hit.get(), 3.0f), 2.0f * 3.0f + 6.0f);
}

// Closing the cache right after the answer waits for the warm-up, so that a
// short-lived process (`kcache warm`) leaves warmed binaries behind: the
// entry is written again after the answer.
TEST_F(ServiceJitPool, ClosingTheCacheWaitsForTheWarmupAfterTheAnswer) {
    auto cache = open();
    auto request = scale_request(7);
    request.warmup_local_size = 16;
    auto p = cache->program(context_, device_, request);
    const auto answered = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
    ASSERT_TRUE(p.ok()) << p.outcome().message;
    ASSERT_EQ(p.outcome().rung, Rung::jit);
    const std::string key = p.outcome().key;
    cache.reset();
    auto store = store::Store::open(dir() / "store");
    ASSERT_TRUE(store.ok()) << store.error().message;
    auto entries = store->list();
    ASSERT_TRUE(entries.ok());
    ASSERT_EQ(entries->size(), 1u);
    EXPECT_EQ(entries->front().key.hex(), key);
    EXPECT_GT(entries->front().created_ms, answered) << "the warmed binary was not stored";
}

// The helper is the one Config::jit_helper names: KCACHE_JIT_PATH is read by
// load_config() alone, never by the layers below it.
TEST_F(ServiceJitPool, HelperPathComesFromTheConfigNotTheEnvironment) {
    ::setenv("KCACHE_JIT_PATH", "/nonexistent/from-the-environment/kcache-jit", 1);
    auto good = open("good");
    auto config = this->config("bad");
    config.jit_helper = (dir() / "no-such-kcache-jit").string();
    auto bad = Cache::open(config);
    auto built = good ? good->program(context_, device_, scale_request(4)) : Program{};
    auto failed = bad ? bad->program(context_, device_, scale_request(5)) : Program{};
    ::unsetenv("KCACHE_JIT_PATH");
    ASSERT_TRUE(good && bad);
    EXPECT_TRUE(built.ok()) << built.outcome().message;
    EXPECT_FALSE(failed.ok());
    EXPECT_NE(failed.outcome().message.find("no-such-kcache-jit"), std::string::npos)
        << failed.outcome().message;
    EXPECT_EQ(failed.outcome().message.find("from-the-environment"), std::string::npos)
        << failed.outcome().message;
}

}  // namespace
}  // namespace kcache::test
