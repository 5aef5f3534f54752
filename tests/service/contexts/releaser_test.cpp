// The service's background threads. The releaser's (the service's own
// header): a load that hands it nothing never wakes it, what a load kept is
// still swept soon after, and one started early waits for the first load. The workers'
// (kcache/common/workers.hpp): a thread whose work is done takes the next, and closing ends idle
// ones.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <thread>

#include "contexts/releaser.hpp"
#include "kcache/common/workers.hpp"

namespace kcache::service {
namespace {

using std::chrono::milliseconds;

// Waits up to `limit` for `count` to reach `at_least`.
bool reached(const std::atomic<int>& count, int at_least, milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (count.load() < at_least) {
        if (std::chrono::steady_clock::now() > end) {
            return false;
        }
        std::this_thread::sleep_for(milliseconds(5));
    }
    return true;
}

// A sweep that counts its calls and finds nothing kept.
Releaser::Sweep counting(std::atomic<int>& sweeps) {
    return [&sweeps](Released&) {
        sweeps++;
        return false;
    };
}

TEST(Releaser, AnEmptyHandOverDoesNotWakeASleepingThread) {
    std::atomic<int> sweeps{0};
    // Period 10 ms: idle after kIdlePolls periods; a long idle wait, so that
    // only a wake-up from the caller could make it sweep within the test.
    Releaser releaser(counting(sweeps), milliseconds(10), milliseconds(60'000));
    releaser.hand_over({});  // starts the thread, which sweeps once
    ASSERT_TRUE(reached(sweeps, 1, milliseconds(5000)));
    std::this_thread::sleep_for(milliseconds(10 * (kIdlePolls + 20)));  // asleep now
    const int before = sweeps.load();
    releaser.hand_over({});  // a load with nothing to release, as after forget()
    std::this_thread::sleep_for(milliseconds(300));
    EXPECT_EQ(sweeps.load(), before) << "the load woke the releaser's thread";
}

TEST(Releaser, WhatALoadKeptIsSweptWithinTheIdleWaitOfASleepingThread) {
    std::atomic<int> sweeps{0};
    Releaser releaser(counting(sweeps), milliseconds(10), milliseconds(200));
    releaser.hand_over({});
    ASSERT_TRUE(reached(sweeps, 1, milliseconds(5000)));
    std::this_thread::sleep_for(milliseconds(10 * (kIdlePolls + 20)));
    const int before = sweeps.load();
    releaser.hand_over({});
    EXPECT_TRUE(reached(sweeps, before + 1, milliseconds(5000)))
        << "a sleeping releaser never read the flag a load set";
}

TEST(Releaser, WorkHandedOverWakesASleepingThreadAtOnce) {
    std::atomic<int> sweeps{0};
    Releaser releaser(counting(sweeps), milliseconds(10), milliseconds(60'000));
    releaser.hand_over({});
    ASSERT_TRUE(reached(sweeps, 1, milliseconds(5000)));
    std::this_thread::sleep_for(milliseconds(10 * (kIdlePolls + 20)));
    const int before = sweeps.load();
    Released r;
    r.programs.emplace_back();  // an empty reference: nothing to release, but work
    releaser.hand_over(std::move(r));
    EXPECT_TRUE(reached(sweeps, before + 1, milliseconds(5000)))
        << "work handed over waited for the idle wait";
}

TEST(Releaser, AThreadStartedEarlyWaitsForTheFirstHandOverToStartItsWork) {
    std::atomic<int> sweeps{0}, started{0};
    Releaser releaser(counting(sweeps), milliseconds(10), milliseconds(60'000),
                      [&started] { started++; });
    releaser.start_early();
    std::this_thread::sleep_for(milliseconds(300));
    EXPECT_EQ(started.load(), 0) << "the start work ran before any load";
    EXPECT_EQ(sweeps.load(), 0);
    releaser.hand_over({});  // the first load: wakes it, though it hands nothing
    EXPECT_TRUE(reached(started, 1, milliseconds(5000)));
    EXPECT_TRUE(reached(sweeps, 1, milliseconds(5000))) << "the first load's flag was not read";
    releaser.hand_over({});
    std::this_thread::sleep_for(milliseconds(100));
    EXPECT_EQ(started.load(), 1);
}

TEST(Releaser, AThreadStartedEarlyAndNeverHandedAnythingEndsWithoutItsWork) {
    std::atomic<int> sweeps{0}, started{0};
    {
        Releaser releaser(counting(sweeps), milliseconds(10), milliseconds(60'000),
                          [&started] { started++; });
        releaser.start_early();
        releaser.start_early();  // a second call starts nothing more
        std::this_thread::sleep_for(milliseconds(50));
    }  // joins a thread that waits with no timeout: the close must wake it
    EXPECT_EQ(started.load(), 0);
    EXPECT_EQ(sweeps.load(), 0);
}

// Work that records the thread it ran on and says when it is done.
std::function<void()> noting(std::thread::id& ran_on, std::promise<void>& done) {
    return [&ran_on, &done] {
        ran_on = std::this_thread::get_id();
        done.set_value();
    };
}

// Waits up to 30 s for a thread of `workers` to wait for work.
bool one_idle(const Workers& workers) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (workers.idle_threads() == 0) {
        if (std::chrono::steady_clock::now() > end) {
            return false;
        }
        std::this_thread::sleep_for(milliseconds(1));
    }
    return true;
}

TEST(Workers, AThreadWhoseWorkIsDoneTakesTheNextWork) {
    Workers workers(std::chrono::seconds(30));
    std::thread::id first, second;
    std::promise<void> first_done, second_done;
    auto a = noting(first, first_done);
    ASSERT_TRUE(workers.start(a));
    ASSERT_TRUE(one_idle(workers));
    auto b = noting(second, second_done);
    ASSERT_TRUE(workers.start(b));
    ASSERT_EQ(second_done.get_future().wait_for(std::chrono::seconds(10)),
              std::future_status::ready);
    EXPECT_EQ(first, second);
    EXPECT_NE(first, std::this_thread::get_id());
    EXPECT_EQ(workers.threads_started(), 1u);
}

TEST(Workers, WorkHandedOverWhileEveryThreadIsBusyGetsAThreadOfItsOwn) {
    Workers workers(std::chrono::seconds(30));
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::function<void()> busy = [released] { released.wait(); };
    ASSERT_TRUE(workers.start(busy));
    std::thread::id ran_on;
    std::promise<void> done;
    auto b = noting(ran_on, done);
    ASSERT_TRUE(workers.start(b));
    EXPECT_EQ(done.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready)
        << "the second work waited for the first";
    EXPECT_EQ(workers.threads_started(), 2u);
    release.set_value();
}

TEST(Workers, AnIdleThreadEndsAfterItsLinger) {
    Workers workers(milliseconds(20));
    std::thread::id first, second;
    std::promise<void> first_done, second_done;
    auto a = noting(first, first_done);
    ASSERT_TRUE(workers.start(a));
    first_done.get_future().wait();
    std::this_thread::sleep_for(milliseconds(300));
    auto b = noting(second, second_done);
    ASSERT_TRUE(workers.start(b));
    second_done.get_future().wait();
    EXPECT_EQ(workers.threads_started(), 2u);
}

TEST(Workers, ClosingEndsIdleThreadsAtOnceAndLeavesLaterWorkToTheCaller) {
    Workers workers(std::chrono::seconds(600));
    std::thread::id ran_on;
    std::promise<void> done;
    auto a = noting(ran_on, done);
    ASSERT_TRUE(workers.start(a));
    done.get_future().wait();
    const auto t0 = std::chrono::steady_clock::now();
    workers.stop_starting();
    workers.join_all();
    // Generous: an idle thread that waited out its linger would take 600 s.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
    bool ran = false;
    std::function<void()> late = [&ran] { ran = true; };
    EXPECT_FALSE(workers.start(late));
    ASSERT_TRUE(late) << "the refused work was not left to the caller";
    late();
    EXPECT_TRUE(ran);
}

TEST(Workers, WorkHandedToAnIdleThreadBeforeClosingStillRuns) {
    Workers workers(std::chrono::seconds(600));
    std::atomic<int> ran{0};
    std::promise<void> done;
    std::thread::id ran_on;
    auto a = noting(ran_on, done);
    ASSERT_TRUE(workers.start(a));
    ASSERT_TRUE(one_idle(workers));
    std::function<void()> b = [&ran] {
        std::this_thread::sleep_for(milliseconds(100));
        ran++;
    };
    ASSERT_TRUE(workers.start(b));
    workers.stop_starting();
    workers.join_all();
    EXPECT_EQ(ran.load(), 1);
}

}  // namespace
}  // namespace kcache::service
