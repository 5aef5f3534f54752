// The releaser's thread (the service's own header): a load that hands it
// nothing never wakes it, and what a load kept is still swept soon after.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "contexts/releaser.hpp"

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

}  // namespace
}  // namespace kcache::service
