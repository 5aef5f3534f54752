// Contexts come and go: the in-process rung lets go of a context's programs
// when the context is gone (or forgotten), stays within its bound (least
// recently used first), and a new context for a key already loaded in this
// process answers from memory without reading the store. Real PoCL contexts;
// a context's death is observed through its destructor callback.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "c_program.hpp"
#include "cache_fixture.hpp"
#include "context_support.hpp"
#include "kcache/kcache.h"
#include "kcache/store/store.hpp"

namespace kcache::test {
namespace {

class ServiceContexts : public CacheTest {
  protected:
    // Removes the stored entry of `key_hex` from the test's store.
    void remove_row(const std::string& key_hex) {
        auto st = store::Store::open(dir() / "store");
        ASSERT_TRUE(st);
        store::Key key;
        ASSERT_TRUE(key.parse_hex(key_hex));
        ASSERT_TRUE(st->remove(key));
    }
    // A cache that keeps no binaries in memory: a new context must read the store.
    std::unique_ptr<Cache> open_without_resident_bytes() const {
        auto c = config();
        c.max_resident_bytes = 0;
        return open(c);
    }
};

// The end of a test's second context `ctx`: the caller's `program` goes,
// then the cache's programs for it, then the test's own reference.
void let_go(Cache& cache, cl_context ctx, Program& program) {
    program = Program();
    cache.forget(ctx);
    clReleaseContext(ctx);
}

// Releases `ctx` (no forget(), and no request after it) and expects the
// releaser to let it go well within the second its sweeps promise.
void expect_released_soon(cl_context ctx, std::atomic<int>& gone) {
    const auto released_at = std::chrono::steady_clock::now();
    clReleaseContext(ctx);
    EXPECT_TRUE(destroyed_within(gone, std::chrono::seconds(5)));
    // The releaser sweeps every kSweepPeriod (250 ms); a generous margin.
    EXPECT_LT(std::chrono::steady_clock::now() - released_at, std::chrono::milliseconds(2000));
}

KernelRequest dot_f32(Mode mode = Mode::blocking) {
    return KernelRequest{"dot", {{"dtype", "f32"}}, {}, mode};
}

TEST_F(ServiceContexts, ForgetReleasesTheContextButNotTheCallersProgram) {
    auto cache = open();
    ASSERT_TRUE(cache);
    std::atomic<int> destroyed{0};
    cl_context ctx = watched_context(device_, destroyed);
    Program p = cache->program(ctx, device_, scale_request(11));
    ASSERT_TRUE(p.ok()) << p.outcome().message;
    clReleaseContext(ctx);  // the caller's program and the cache's keep it alive
    EXPECT_EQ(destroyed.load(), 0);

    EXPECT_EQ(cache->forget(ctx), 1u);
    EXPECT_EQ(cache->forget(ctx), 0u);
    EXPECT_EQ(destroyed.load(), 0);  // the caller still holds its program
    cl_context owner = nullptr;
    ASSERT_EQ(clGetProgramInfo(p.get(), CL_PROGRAM_CONTEXT, sizeof(owner), &owner, nullptr),
              CL_SUCCESS);
    EXPECT_FLOAT_EQ(run_scale(owner, device_, p.get(), 3.0f), 2.0f * 3.0f + 11.0f);
    p = Program();
    EXPECT_TRUE(destroyed_within(destroyed));
    EXPECT_EQ(cache->stats().programs_released, 1u);
}

TEST_F(ServiceContexts, ForgetThroughTheCApi) {
    ::setenv("KCACHE_DIR", (dir() / "store").c_str(), 1);
    ::setenv("KCACHE_JIT_PATH", jit_helper_path(), 1);
    ::unsetenv("KCACHE_DISABLE");
    kcache_cache* cache = nullptr;
    ASSERT_EQ(kcache_open(&cache), KCACHE_OK) << kcache_last_error();
    std::size_t dropped = 99;
    EXPECT_EQ(kcache_forget_context(nullptr, context_, &dropped), KCACHE_INVALID_ARGUMENT);
    EXPECT_EQ(dropped, 0u);
    EXPECT_EQ(kcache_forget_context(cache, nullptr, nullptr), KCACHE_INVALID_ARGUMENT);
    EXPECT_STRNE(kcache_last_error(), "");

    std::atomic<int> destroyed{0};
    cl_context ctx = watched_context(device_, destroyed);
    ASSERT_NO_FATAL_FAILURE(get_and_release_program(cache, ctx, device_, "dot"));
    clReleaseContext(ctx);
    EXPECT_EQ(destroyed.load(), 0);  // kept alive by the cache's program
    ASSERT_EQ(kcache_forget_context(cache, ctx, &dropped), KCACHE_OK);
    EXPECT_EQ(dropped, 1u);
    EXPECT_EQ(destroyed.load(), 1);
    kcache_stats st = KCACHE_STATS_INIT;
    ASSERT_EQ(kcache_get_stats(cache, &st), KCACHE_OK);
    EXPECT_EQ(st.programs_released, 1u);
    kcache_close(cache);
}

// Records the thread that destroyed a context.
void CL_CALLBACK note_destroyer(cl_context, void* user) {
    *static_cast<std::atomic<std::thread::id>*>(user) = std::this_thread::get_id();
}

TEST_F(ServiceContexts, ContextOnlyTheCacheHoldsIsReleasedOffTheCallersPath) {
    auto cache = open();
    ASSERT_TRUE(cache);
    std::atomic<int> first_gone{0}, second_gone{0};
    std::atomic<std::thread::id> destroyer{};
    cl_context first = watched_context(device_, first_gone);
    ASSERT_EQ(clSetContextDestructorCallback(first, note_destroyer, &destroyer), CL_SUCCESS);
    ASSERT_TRUE(cache->program(first, device_, scale_request(12)).ok());
    clReleaseContext(first);
    EXPECT_EQ(first_gone.load(), 0);  // only the cache holds it now

    cl_context second = watched_context(device_, second_gone);
    Program p = cache->program(second, device_, scale_request(12));
    ASSERT_TRUE(p.ok()) << p.outcome().message;
    EXPECT_TRUE(destroyed_within(first_gone, std::chrono::seconds(5)));  // the load swept it
    EXPECT_NE(destroyer.load(), std::this_thread::get_id())
        << "the context was destroyed inside program()";
    EXPECT_EQ(second_gone.load(), 0);  // still held by its owner
    EXPECT_TRUE(p.outcome().resident);
    auto again = cache->program(second, device_, scale_request(12));
    EXPECT_EQ(again.outcome().rung, Rung::in_process);  // a live context keeps its programs
    p = Program();
    again = Program();
    clReleaseContext(second);
    EXPECT_EQ(cache->forget(second), 1u);
    EXPECT_EQ(second_gone.load(), 1);
}

TEST_F(ServiceContexts, AReleasedContextGoesWithinASecondWithNoFurtherRequest) {
    auto cache = open();
    ASSERT_TRUE(cache);
    std::atomic<int> gone{0};
    cl_context ctx = watched_context(device_, gone);
    ASSERT_TRUE(cache->program(ctx, device_, scale_request(13)).ok());
    expect_released_soon(ctx, gone);
    EXPECT_EQ(cache->stats().programs_released, 1u);
}

TEST_F(ServiceContexts, AReleasedContextGoesWithinASecondAfterTheReleaserWentIdle) {
    auto cache = open();
    ASSERT_TRUE(cache);
    {  // a first load starts the releaser's thread
        Program first = cache->program(context_, device_, scale_request(14));
        ASSERT_TRUE(first.ok()) << first.outcome().message;
    }
    EXPECT_EQ(cache->forget(context_), 1u);
    // With nothing to do for 8 periods of 250 ms (releaser.hpp, kIdlePolls),
    // the releaser stops polling and sleeps until a request wakes it.
    std::this_thread::sleep_for(std::chrono::milliseconds(2750));
    std::atomic<int> gone{0};
    cl_context ctx = watched_context(device_, gone);
    ASSERT_TRUE(cache->program(ctx, device_, scale_request(14)).ok());
    expect_released_soon(ctx, gone);
}

TEST_F(ServiceContexts, LeastRecentlyUsedProgramIsReleasedFirst) {
    auto c = config();
    c.max_programs = 2;
    auto cache = open(c);
    ASSERT_TRUE(cache);
    auto a = cache->program(context_, device_, scale_request(21));
    auto b = cache->program(context_, device_, scale_request(22));
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(cache->program(context_, device_, scale_request(21)).outcome().rung,
              Rung::in_process);  // a is now the most recent; b the least
    auto cprog = cache->program(context_, device_, scale_request(23));  // releases b
    ASSERT_TRUE(cprog.ok());
    EXPECT_EQ(cache->stats().programs_released, 1u);
    EXPECT_EQ(cache->program(context_, device_, scale_request(21)).outcome().rung,
              Rung::in_process);
    auto b2 = cache->program(context_, device_, scale_request(22));  // loads again, releases c
    EXPECT_NE(b2.outcome().rung, Rung::in_process);
    EXPECT_TRUE(b2.outcome().resident);
    EXPECT_NE(cache->program(context_, device_, scale_request(23)).outcome().rung,
              Rung::in_process);
    // A program the caller holds outlives its release from the cache.
    EXPECT_FLOAT_EQ(run_scale(context_, device_, b.get(), 1.0f), 2.0f + 22.0f);
    EXPECT_EQ(cache->stats().jit_compiles, 3u);
}

TEST_F(ServiceContexts, NewContextLoadsFromMemoryWithoutReadingTheStore) {
    auto cache = open();
    ASSERT_TRUE(cache);
    auto first = cache->program(context_, device_, dot_f32());
    ASSERT_TRUE(first.ok()) << first.outcome().message;
    const auto reads = cache->stats().store_hits;
    remove_row(first.outcome().key);  // only memory can answer now
    std::atomic<int> gone{0};
    cl_context other = watched_context(device_, gone);
    auto p = cache->program(other, device_, dot_f32());
    ASSERT_TRUE(p.ok()) << p.outcome().message;
    EXPECT_TRUE(p.outcome().resident);
    EXPECT_EQ(p.outcome().rung, Rung::user_store);
    EXPECT_EQ(cache->stats().store_hits, reads);
    EXPECT_EQ(cache->stats().resident_hits, 1u);
    EXPECT_EQ(cache->stats().jit_compiles, 1u);

    auto fresh = open();  // another process would miss: the row is really gone
    auto miss = fresh->program(other, device_, dot_f32(Mode::fail_fast));
    EXPECT_EQ(miss.outcome().status, StatusCode::not_cached);
    let_go(*cache, other, p);
    EXPECT_EQ(gone.load(), 1);
}

// A new context reuses the plan this cache resolved for the request before
// (no quirks, rendering or hashing again), but never the request's mode or
// deadline: those are each request's own.
TEST_F(ServiceContexts, PlanReusedForANewContextKeepsEachRequestsModeAndDeadline) {
    auto cache = open_without_resident_bytes();  // the removed row is gone for good
    ASSERT_TRUE(cache);
    auto first = cache->program(context_, device_, scale_request(41));
    ASSERT_TRUE(first.ok()) << first.outcome().message;
    remove_row(first.outcome().key);
    std::atomic<int> gone{0};
    cl_context other = watched_context(device_, gone);
    auto request = scale_request(41);
    request.mode = Mode::fail_fast;
    auto miss = cache->program(other, device_, request);
    EXPECT_EQ(miss.outcome().status, StatusCode::not_cached) << miss.outcome().message;
    EXPECT_EQ(miss.outcome().key, first.outcome().key);

    request.mode = Mode::blocking;
    request.deadline = std::chrono::milliseconds(1);  // no compile fits in it
    EXPECT_EQ(cache->program(other, device_, request).outcome().status, StatusCode::timeout);

    request.deadline = std::chrono::milliseconds(120'000);
    auto built = cache->program(other, device_, request);
    ASSERT_TRUE(built.ok()) << built.outcome().message;
    EXPECT_EQ(built.outcome().rung, Rung::jit);
    EXPECT_EQ(built.outcome().key, first.outcome().key);
    let_go(*cache, other, built);
    EXPECT_EQ(gone.load(), 1);
}

TEST_F(ServiceContexts, ResidentBytesOffReadsTheStore) {
    auto cache = open_without_resident_bytes();
    ASSERT_TRUE(cache);
    ASSERT_TRUE(cache->program(context_, device_, scale_request(31)).ok());
    std::atomic<int> gone{0};
    cl_context other = watched_context(device_, gone);
    auto p = cache->program(other, device_, scale_request(31));
    ASSERT_TRUE(p.ok());
    EXPECT_FALSE(p.outcome().resident);
    EXPECT_EQ(p.outcome().rung, Rung::user_store);
    EXPECT_EQ(cache->stats().store_hits, 1u);
    let_go(*cache, other, p);
}

}  // namespace
}  // namespace kcache::test
