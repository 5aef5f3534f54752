// Program calls one at a time where the device data says so (label pocl),
// through libkcache.so as the layer uses it: a caller's
// kcache_program_calls_begin() holds kcache's loads of binaries back until
// its end(), once a device whose rule asks for it (PoCL with its kernel
// cache off) has been planned; before that the bracket holds nothing.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "cache_fixture.hpp"

namespace kcache::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

class SerialCalls : public CacheTest {
  protected:
    // While another thread holds the bracket for `hold`, a store hit (a load
    // of the stored binary) of `salt` through a new cache: whether it ended
    // only after the bracket did.
    bool load_waited_for_the_bracket(int salt, milliseconds hold) const;
};

bool SerialCalls::load_waited_for_the_bracket(int salt, milliseconds hold) const {
    std::atomic<bool> holding{false};
    Clock::time_point released;
    std::thread bracket([&] {
        kcache_program_calls_begin();
        holding = true;
        std::this_thread::sleep_for(hold);
        released = Clock::now();
        kcache_program_calls_end();
    });
    while (!holding) {
        std::this_thread::yield();
    }
    auto cache = open();
    auto hit = cache->program(context_, device_, scale_request(salt));
    const auto answered = Clock::now();
    bracket.join();
    EXPECT_EQ(hit.outcome().rung, Rung::user_store) << hit.outcome().message;
    return answered >= released;
}

TEST_F(SerialCalls, ACallersBracketHoldsKcachesLoadsOnlyWhereTheDeviceDataSaysSo) {
    kcache_program_calls_end();  // an end without a begin releases nothing
    {
        auto cache = open();
        ASSERT_EQ(cache->program(context_, device_, scale_request(60)).outcome().rung, Rung::jit);
        cache->drain(milliseconds(10'000));
    }
    // No such device planned yet: the bracket holds nothing back.
    EXPECT_FALSE(load_waited_for_the_bracket(60, milliseconds(1'500)));
    // PoCL with its cache off: the rule pocl-uncached-loads-one-at-a-time
    // applies from the next plan of the device (a new cache plans it anew).
    ::setenv("POCL_KERNEL_CACHE", "0", 1);
    {
        // A bracket begun before that holds nothing: the first plan turns it on.
        auto planned = open();
        ASSERT_EQ(planned->program(context_, device_, scale_request(60)).outcome().rung,
                  Rung::user_store);
    }
    EXPECT_TRUE(load_waited_for_the_bracket(60, milliseconds(1'500)));
    // Nested brackets on one thread (the layer's inside kcache's own calls).
    kcache_program_calls_begin();
    kcache_program_calls_begin();
    kcache_program_calls_end();
    kcache_program_calls_end();
    EXPECT_TRUE(load_waited_for_the_bracket(60, milliseconds(500)));
    ::unsetenv("POCL_KERNEL_CACHE");
}

}  // namespace
}  // namespace kcache::test
