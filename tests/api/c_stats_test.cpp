// The counters by index through the shared library (kcache_stat_count,
// kcache_stat_name, kcache_stat_values): every value of the frozen
// kcache_stats under its name and at its place, every status and rung in
// the request counts, values that move with the requests, and misuse refused.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "c_fixture.hpp"

namespace kcache::test {
namespace {

using CApiStats = CApiTest;

std::vector<std::string> all_names() {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < kcache_stat_count(); ++i) {
        names.emplace_back(kcache_stat_name(i));
    }
    return names;
}

std::vector<std::uint64_t> values_of(kcache_cache* cache) {
    std::size_t n = 0;
    EXPECT_EQ(kcache_stat_values(cache, nullptr, 0, &n), KCACHE_STATUS_OK);
    std::vector<std::uint64_t> v(n);
    EXPECT_EQ(kcache_stat_values(cache, v.data(), v.size(), &n), KCACHE_STATUS_OK);
    EXPECT_EQ(n, v.size());
    return v;
}

std::size_t index_of(const std::string& name) {
    for (std::size_t i = 0; i < kcache_stat_count(); ++i) {
        if (name == kcache_stat_name(i)) {
            return i;
        }
    }
    ADD_FAILURE() << "no counter named " << name;
    return kcache_stat_count();
}

TEST_F(CApiStats, TheNamesAreUniqueAndCoverEveryStatusAndRung) {
    const std::vector<std::string> names = all_names();
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
    EXPECT_EQ(kcache_stat_name(names.size()), nullptr);
    EXPECT_EQ(kcache_stat_name(static_cast<std::size_t>(-1)), nullptr);
    // The frozen struct's request table stops before driver_suspect; by index it does not.
    for (const char* rung :
         {"in_process", "user_store", "pack", "aot", "failure_record", "jit", "none", "remote"}) {
        for (const char* status : {"ok", "timeout", "internal_error", "driver_suspect"}) {
            const std::string n = std::string("requests.") + rung + "." + status;
            EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
        }
    }
    // A counter the frozen struct has, in its order, first.
    EXPECT_EQ(names.at(0), "entries");
    EXPECT_EQ(names.at(22), "store_write_failures");
    EXPECT_NE(std::find(names.begin(), names.end(), "latency.load.bucket.27"), names.end());
}

// Each value of kcache_stats is the counter of the same name, read at rest.
TEST_F(CApiStats, EveryFrozenValueIsTheCounterOfTheSameName) {
    cl_program p = nullptr;
    kcache_kernel_request r = KCACHE_KERNEL_REQUEST_INIT;
    r.kernel = "dot";
    ASSERT_EQ(kcache_get_kernel_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_OK)
        << kcache_last_error();
    clReleaseProgram(p);
    kcache_stats frozen = KCACHE_STATS_INIT;
    ASSERT_EQ(kcache_get_stats(cache(), &frozen), KCACHE_STATUS_OK);
    const std::vector<std::uint64_t> v = values_of(cache());
    EXPECT_EQ(v.at(index_of("jit_compiles")), frozen.jit_compiles);
    EXPECT_GE(frozen.jit_compiles, 1u);
    EXPECT_EQ(v.at(index_of("entries")), frozen.entries);
    EXPECT_EQ(v.at(index_of("requests.jit.ok")), frozen.requests[KCACHE_RUNG_JIT][KCACHE_OK]);
    EXPECT_EQ(v.at(index_of("latency.load.count")), frozen.load_latency.count);
    EXPECT_EQ(v.at(index_of("latency.answered.jit.sum_ns")),
              frozen.answered_latency[KCACHE_RUNG_JIT].sum_ns);
}

TEST_F(CApiStats, ValuesMoveWithTheRequests) {
    const std::size_t hits = index_of("in_process_hits");
    const std::size_t compiles = index_of("jit_compiles");
    const std::vector<std::uint64_t> before = values_of(cache());
    kcache_kernel_request r = KCACHE_KERNEL_REQUEST_INIT;
    r.kernel = "dot";
    for (int i = 0; i < 3; ++i) {
        cl_program p = nullptr;
        ASSERT_EQ(kcache_get_kernel_program(cache(), context_, device_, &r, &p, nullptr),
                  KCACHE_STATUS_OK);
        clReleaseProgram(p);
    }
    const std::vector<std::uint64_t> after = values_of(cache());
    EXPECT_EQ(after.at(compiles) - before.at(compiles), 1u);
    EXPECT_EQ(after.at(hits) - before.at(hits), 2u);
}

TEST_F(CApiStats, ASmallerCapacityGetsThatManyAndTheCount) {
    std::uint64_t two[3] = {0, 0, 0xfeed};
    std::size_t n = 0;
    ASSERT_EQ(kcache_stat_values(cache(), two, 2, &n), KCACHE_STATUS_OK);
    EXPECT_EQ(n, kcache_stat_count());
    EXPECT_EQ(two[2], 0xfeedu);
    EXPECT_EQ(kcache_stat_values(cache(), two, 2, nullptr), KCACHE_STATUS_OK);
}

TEST_F(CApiStats, MisuseIsRefused) {
    std::uint64_t one = 0;
    std::size_t n = 0;
    EXPECT_EQ(kcache_stat_values(nullptr, &one, 1, &n), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kcache_last_error(), "kcache_stat_values"), nullptr);
    EXPECT_EQ(kcache_stat_values(cache(), nullptr, 4, &n), KCACHE_STATUS_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace kcache::test
