// Publish: a write to the user store that fails is counted in the stats and
// named in the request's misses, never dropped; the answer is still served.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstddef>

#include "c_program.hpp"
#include "cache_fixture.hpp"
#include "kcache/kcache.h"

namespace kcache::test {
namespace {

using ServicePublish = CacheTest;

TEST_F(ServicePublish, AFailedStoreWriteIsCountedAndNamed) {
    auto c = config();
    c.max_bytes = 16;  // smaller than any binary: every put fails (too large)
    auto cache = open(c);
    ASSERT_TRUE(cache);
    auto p = cache->program(context_, device_, scale_request(61));
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    EXPECT_EQ(p.outcome().rung, Rung::jit);
    bool named = false;
    for (const RungMiss& m : p.outcome().misses) {
        named |= m.rung == Rung::user_store && m.cause == MissCause::not_stored &&
                 m.detail.find("not stored") != std::string::npos;
    }
    EXPECT_TRUE(named) << "the outcome does not say the binary was not stored";
    EXPECT_EQ(cache->stats().store_write_failures, 1u);
    EXPECT_FLOAT_EQ(run_scale(context_, device_, p.get(), 2.0f), 2.0f * 2.0f + 61.0f);

    // A writable store takes it: nothing counted.
    auto fine = open("other");
    ASSERT_TRUE(fine->program(context_, device_, scale_request(61)).ok());
    EXPECT_EQ(fine->stats().store_write_failures, 0u);
}

TEST_F(ServicePublish, TheCStatsCarryFailedWrites) {
    ::setenv("KCACHE_DIR", (dir() / "c").c_str(), 1);
    ::setenv("KCACHE_JIT_PATH", jit_helper_path(), 1);
    ::setenv("KCACHE_MAX_SIZE", "16", 1);
    kcache_cache* cache = nullptr;
    const kcache_status opened = kcache_open(&cache);
    ::unsetenv("KCACHE_MAX_SIZE");
    ASSERT_EQ(opened, KCACHE_OK) << kcache_last_error();
    ASSERT_NO_FATAL_FAILURE(get_and_release_program(cache, context_, device_, "dot"));
    kcache_stats st = KCACHE_STATS_INIT;
    ASSERT_EQ(kcache_get_stats(cache, &st), KCACHE_OK);
    EXPECT_EQ(st.store_write_failures, 1u);
    kcache_stats older = KCACHE_STATS_INIT;  // built before the counter existed
    older.struct_size = offsetof(kcache_stats, store_write_failures);
    older.store_write_failures = 77;
    ASSERT_EQ(kcache_get_stats(cache, &older), KCACHE_OK);
    EXPECT_EQ(older.store_write_failures, 77u);
    EXPECT_EQ(older.jit_compiles, 1u);
    kcache_close(cache);
}

}  // namespace
}  // namespace kcache::test
