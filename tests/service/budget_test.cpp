// Time budgets at the library API: a huge deadline means "no practical
// limit" (never an overflow into an instant timeout), and a recorded timeout
// holds back only requests whose budget is not larger than the one it failed under.

#include <gtest/gtest.h>

#include <chrono>

#include "cache_fixture.hpp"

namespace kcache::test {
namespace {

using ServiceBudget = CacheTest;
using std::chrono::milliseconds;

TEST_F(ServiceBudget, HugeDeadlineMeansNoPracticalLimit) {
    auto cache = open();
    ASSERT_TRUE(cache);
    SourceRequest r = scale_request(41);
    r.deadline = milliseconds::max();
    auto p = cache->program(context_, device_, r);
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    EXPECT_EQ(p.outcome().rung, Rung::jit);
    EXPECT_FLOAT_EQ(run_scale(context_, device_, p.get(), 1.0f), 2.0f + 41.0f);
}

TEST_F(ServiceBudget, ALargerBudgetRetriesARecordedTimeout) {
    auto cache = open();
    SourceRequest slow;
    slow.source = nested_macro_kernel(17);
    slow.deadline = milliseconds(300);
    EXPECT_EQ(cache->program(context_, device_, slow).outcome().status, StatusCode::timeout);
    auto same = cache->program(context_, device_, slow);
    EXPECT_EQ(same.outcome().rung, Rung::failure_record) << same.outcome().message;
    EXPECT_NE(same.outcome().message.find("budget of 300 ms"), std::string::npos)
        << same.outcome().message;
    EXPECT_EQ(cache->stats().jit_compiles, 1u);
    slow.deadline = milliseconds(600);
    auto larger = cache->program(context_, device_, slow);
    EXPECT_NE(larger.outcome().rung, Rung::failure_record) << larger.outcome().message;
    EXPECT_EQ(cache->stats().jit_compiles, 2u) << "the larger budget compiles again";
}

}  // namespace
}  // namespace kcache::test
