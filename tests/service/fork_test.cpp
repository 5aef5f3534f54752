// A Cache used in the child of a fork() (label pocl), through the public API
// over the C API, as an application's forked workers use it: the child makes
// its own parts at its first call and answers as a fresh process would (a
// store hit for what the parent stored, a compile for the rest), whether the
// parent was idle or compiling on another thread; the parent goes on as
// before. Every child runs under a deadline: a hang fails the test.

#include <gtest/gtest.h>

#include <cstdio>
#include <thread>

#include "cache_fixture.hpp"
#include "child_process.hpp"

namespace kcache::test {
namespace {

using Fork = CacheTest;
using std::chrono::milliseconds;
constexpr milliseconds kChildLimit{60'000};

// In a child: 0 when `salt`'s request through `cache` is answered by `rung`
// with a program whose kernel can be made (the child runs nothing: the
// driver's own threads are the parent's); else says why on stderr.
int expect_answer(Cache& cache, cl_context context, cl_device_id device, int salt, Rung rung) {
    auto p = cache.program(context, device, scale_request(salt));
    if (!p.ok() || p.outcome().rung != rung) {
        std::fprintf(stderr, "salt %d: status %d rung %d (wanted %d): %s\n", salt,
                     static_cast<int>(p.outcome().status), static_cast<int>(p.outcome().rung),
                     static_cast<int>(rung), p.outcome().message.c_str());
        return 1;
    }
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p.get(), "scale", &err);
    if (k != nullptr) {
        clReleaseKernel(k);
    }
    return err == CL_SUCCESS ? 0 : 2;
}

TEST_F(Fork, AChildOfAnIdleParentHitsWhatItStoredAndCompilesTheRest) {
    auto cache = open();
    ASSERT_EQ(cache->program(context_, device_, scale_request(1)).outcome().rung, Rung::jit);
    cache->drain(milliseconds(10'000));  // stored before the fork
    const std::string child = in_forked_child(
        [&] {
            return expect_answer(*cache, context_, device_, 1, Rung::user_store) * 10 +
                   expect_answer(*cache, context_, device_, 2, Rung::jit) +
                   (cache->stats().jit_compiles == 1 ? 0 : 50);
        },
        kChildLimit);
    EXPECT_EQ(child, "exit 0");
    // The parent's parts are its own still: the child's compile is in the
    // store, the parent's in-process rung answers what it built.
    auto again = cache->program(context_, device_, scale_request(1));
    EXPECT_EQ(again.outcome().rung, Rung::in_process) << again.outcome().message;
    auto stored = cache->program(context_, device_, scale_request(2));
    EXPECT_EQ(stored.outcome().rung, Rung::user_store) << stored.outcome().message;
    EXPECT_FLOAT_EQ(run_scale(context_, device_, stored.get(), 1.0f), 4.0f);
}

// The parent's other thread is in a compile that takes minutes (its helper,
// its pool's lock and its key's file lock held) when the process forks: the
// child's request neither waits for that compile nor hangs on what it held.
TEST_F(Fork, AChildForkedDuringACompileOnAnotherThreadCompilesItsOwn) {
    auto cache = open();
    Outcome slow;
    std::thread compiling([&] {
        SourceRequest r;
        r.name = "slow";
        r.source = nested_macro_kernel(17);
        r.deadline = milliseconds(6'000);
        slow = cache->program(context_, device_, r).outcome();
    });
    std::this_thread::sleep_for(milliseconds(1'000));  // its helper is compiling
    const auto start = std::chrono::steady_clock::now();
    const std::string child = in_forked_child(
        [&] { return expect_answer(*cache, context_, device_, 3, Rung::jit); }, kChildLimit);
    const auto child_took = std::chrono::steady_clock::now() - start;
    compiling.join();
    EXPECT_EQ(child, "exit 0");
    EXPECT_LT(child_took, milliseconds(30'000));
    EXPECT_EQ(slow.status, StatusCode::timeout) << slow.message;
    // A second generation: the child's child opens its own again.
    const std::string grandchild = in_forked_child(
        [&] {
            return in_forked_child(
                       [&] { return expect_answer(*cache, context_, device_, 4, Rung::jit); },
                       kChildLimit) == "exit 0"
                       ? 0
                       : 1;
        },
        kChildLimit);
    EXPECT_EQ(grandchild, "exit 0");
}

}  // namespace
}  // namespace kcache::test
