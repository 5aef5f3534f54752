// Concurrent requests for one key share one compile: threads through the
// in-process shared future, processes through the per-key file lock.
// Compiles are counted (Cache::stats().jit_compiles), not assumed.

#include <gtest/gtest.h>

#include <thread>

#include "cache_fixture.hpp"
#include "child_process.hpp"

namespace kcache::test {
namespace {

using ServiceConcurrency = CacheTest;
using std::chrono::milliseconds;

// ServiceConcurrency enough (~1 s on PoCL) that every requester arrives while it compiles.
SourceRequest medium_request() {
    SourceRequest r;
    r.name = "medium";
    r.source = nested_macro_kernel(11);
    r.deadline = milliseconds(60'000);
    return r;
}

TEST_F(ServiceConcurrency, EightThreadsOneKeyOneCompile) {
    auto cache = open();
    std::vector<std::thread> threads;
    std::vector<Outcome> outcomes(8);
    for (int i = 0; i < 8; ++i) {
        threads.emplace_back([&, i] {
            auto p = cache->program(context_, device_, medium_request());
            outcomes[i] = p.outcome();
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    for (const auto& o : outcomes) {
        EXPECT_EQ(o.status, StatusCode::ok) << o.message;
        EXPECT_EQ(o.key, outcomes[0].key);
    }
    EXPECT_EQ(cache->stats().jit_compiles, 1u);
}

TEST_F(ServiceConcurrency, FourProcessesOneKeyOneCompile) {
    if (child_role() == "requester") {
        ASSERT_TRUE(wait_for_start_gate());
        Config c = config();
        c.dir = child_env("STORE_DIR");
        Outcome o;
        auto cache = Cache::open(c, &o);
        ASSERT_TRUE(cache) << o.message;
        auto p = cache->program(context_, device_, medium_request());
        report_line(std::string(to_string(p.outcome().status)) + " " + to_string(p.outcome().rung) +
                    " " + std::to_string(cache->stats().jit_compiles));
        return;
    }
    auto group = ChildGroup::spawn(4, "requester", {{"STORE_DIR", (dir() / "shared").string()}});
    group.release();
    auto results = group.wait_all(milliseconds(120'000));
    int compiles = 0;
    for (const auto& r : results) {
        ASSERT_TRUE(r.ok()) << r.describe();
        ASSERT_EQ(r.lines.size(), 1u) << r.describe();
        std::istringstream in(r.lines[0]);
        std::string status, rung;
        int n = 0;
        in >> status >> rung >> n;
        EXPECT_EQ(status, "ok") << r.lines[0];
        compiles += n;
    }
    EXPECT_EQ(compiles, 1);
}

}  // namespace
}  // namespace kcache::test
