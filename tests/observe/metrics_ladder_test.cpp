// The metrics and the trace of real requests on PoCL: a compile, a store hit
// and a repeat hit land in the histograms (Cache::stats() and the C API's
// appended fields; a caller with an older, shorter kcache_stats gets none of
// them), a cache with metrics off adds nothing, a traced request's record
// has its spans (a first hit's: its steps; a repeat hit's: none of them),
// and a trace location that cannot be written is reported
// once while every request is answered as without a trace.

#include <gtest/gtest.h>

#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "cache_fixture.hpp"
#include "kcache/canary/canary.hpp"
#include "kcache/common/log.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/kcache.h"
#include "kcache/observe/trace.hpp"

namespace kcache::test {
namespace {

using nlohmann::json;

class MetricsLadder : public CacheTest {
  protected:
    void TearDown() override {
        trace::configure("", 0);
        logging::set_sink({});
        CacheTest::TearDown();
    }
    Program dot(Cache& cache, cl_context context) {
        KernelRequest r;
        r.kernel = "dot";
        r.params = {{"dtype", "f32"}};
        return cache.program(context, device_, r);
    }
};

std::size_t at(Rung r) {
    return static_cast<std::size_t>(r);
}

TEST_F(MetricsLadder, ACompileAStoreHitAndARepeatHitAreObserved) {
    auto cache = open();
    const CacheStats before = cache->stats();
    ASSERT_TRUE(dot(*cache, context_).ok());  // JIT
    ASSERT_TRUE(dot(*cache, context_).ok());  // repeat hit
    auto other = open();
    ASSERT_EQ(dot(*other, context_).outcome().rung, Rung::user_store);
    const CacheStats s = cache->stats();
    EXPECT_EQ(s.request.count - before.request.count, 3u);
    EXPECT_EQ(s.answered[at(Rung::jit)].count - before.answered[at(Rung::jit)].count, 1u);
    EXPECT_EQ(s.answered[at(Rung::in_process)].count - before.answered[at(Rung::in_process)].count,
              1u);
    EXPECT_EQ(s.answered[at(Rung::user_store)].count - before.answered[at(Rung::user_store)].count,
              1u);
    EXPECT_EQ(s.compile.count - before.compile.count, 1u);
    EXPECT_GE(s.load.count - before.load.count, 2u);  // the compiled bytes, the stored bytes
    EXPECT_EQ(s.requests[at(Rung::jit)][0] - before.requests[at(Rung::jit)][0], 1u);
    EXPECT_GT(s.compile.sum_ns - before.compile.sum_ns, 1'000'000u);  // a compile takes > 1 ms

    kcache_stats c = KCACHE_STATS_INIT;
    // The C API reads the same process-wide figures through any open cache.
    ::setenv("KCACHE_DIR", (dir() / "c-api").c_str(), 1);
    kcache_cache* api = nullptr;
    const kcache_status opened = kcache_open(&api);
    ::unsetenv("KCACHE_DIR");
    ASSERT_EQ(opened, KCACHE_OK) << kcache_last_error();
    ASSERT_EQ(kcache_get_stats(api, &c), KCACHE_OK);
    EXPECT_GE(c.request_latency.count, s.request.count);
    EXPECT_GE(c.compile_latency.count, 1u);
    EXPECT_GE(c.requests[KCACHE_RUNG_JIT][KCACHE_OK], 1u);
    kcache_stats older = KCACHE_STATS_INIT;
    older.struct_size = offsetof(kcache_stats, request_latency);
    older.request_latency.count = 4242;
    ASSERT_EQ(kcache_get_stats(api, &older), KCACHE_OK);
    EXPECT_EQ(older.request_latency.count, 4242u);  // past its size: untouched
    kcache_close(api);
}

TEST_F(MetricsLadder, ACacheWithMetricsOffAddsNothing) {
    Config c = config();
    c.metrics = false;
    auto cache = open(c);
    const CacheStats before = cache->stats();
    ASSERT_TRUE(dot(*cache, context_).ok());
    ASSERT_TRUE(dot(*cache, context_).ok());
    const CacheStats after = cache->stats();
    EXPECT_EQ(after.request.count, before.request.count);
    EXPECT_EQ(after.compile.count, before.compile.count);
    EXPECT_EQ(after.load.count, before.load.count);
    EXPECT_EQ(after.jit_compiles, 1u);  // the cache's own counters still count
}

TEST_F(MetricsLadder, ATracedRequestsRecordHasItsSpans) {
    Config c = config();
    c.trace = (dir() / "trace.json").string();
    auto cache = open(c);
    ASSERT_TRUE(dot(*cache, context_).ok());
    ASSERT_TRUE(cache->program(context_, device_, scale_request(3)).ok());
    cache->drain(std::chrono::seconds(10));
    std::ifstream in(dir() / "trace.json");
    std::stringstream text;
    text << in.rdbuf();
    const json events = json::parse(text.str() + "]");
    std::set<std::string> names;
    int requests = 0;
    for (const json& e : events) {
        names.insert(e["name"].get<std::string>());
        if (e["name"] == "request") {
            ++requests;
            EXPECT_EQ(e["args"]["result"], "JIT");
            EXPECT_EQ(e["args"]["misses"][0]["rung"], "in_process");
            EXPECT_EQ(e["args"]["key"].get<std::string>().size(), 16u);
        }
    }
    EXPECT_EQ(requests, 2);
    for (const char* span : {"compile", "load", "source"}) {
        EXPECT_TRUE(names.count(span)) << span << " missing from " << text.str();
    }
}

// The spans inside the request event `r` of `events` (same thread, within its time).
std::set<std::string> spans_of(const json& events, const json& r) {
    std::set<std::string> names;
    const double from = r["ts"].get<double>(), to = from + r["dur"].get<double>();
    for (const json& e : events) {
        if (e.value("ph", "") == "X" && e["name"] != "request" && e["tid"] == r["tid"] &&
            e["pid"] == r["pid"] && e["ts"].get<double>() >= from &&
            e["ts"].get<double>() + e["dur"].get<double>() <= to) {
            names.insert(e["name"].get<std::string>());
        }
    }
    return names;
}

TEST_F(MetricsLadder, AFirstHitsRecordSplitsItIntoItsStepsAndARepeatHitHasNone) {
    ASSERT_TRUE(dot(*open(), context_).ok());  // compiled and stored, untraced
    Config c = config();
    c.trace = (dir() / "trace.json").string();
    // The gates run on the record the canary left, before the answer (under
    // warn they run after it, on a worker).
    c.canary = CanaryPolicy::enforce;
    auto identity = device_db::probe(device_);
    ASSERT_TRUE(identity.ok()) << identity.error().message;
    canary::Record record;  // as `kcache warm` leaves it: the canary has run
    record.identity = canary::driver_identity(identity.value());
    ASSERT_TRUE(canary::save_record(canary::canary_dir(c.dir), record).ok());
    auto cache = open(c);
    ASSERT_EQ(dot(*cache, context_).outcome().rung, Rung::user_store);
    ASSERT_EQ(dot(*cache, context_).outcome().rung, Rung::in_process);
    cache->drain(std::chrono::seconds(10));
    std::ifstream in(dir() / "trace.json");
    std::stringstream text;
    text << in.rdbuf();
    const json events = json::parse(text.str() + "]");
    std::vector<json> requests;
    for (const json& e : events) {
        if (e["name"] == "request") {
            requests.push_back(e);
        }
    }
    ASSERT_EQ(requests.size(), 2u) << text.str();
    const std::set<std::string> first = spans_of(events, requests[0]);
    for (const char* step :
         {"plan", "canary gate", "errata gate", "tier read", "load", "publish"}) {
        EXPECT_TRUE(first.count(step)) << step << " missing from the first hit in " << text.str();
    }
    const std::set<std::string> repeat = spans_of(events, requests[1]);
    for (const char* step : {"plan", "canary gate", "errata gate", "tier read", "load"}) {
        EXPECT_FALSE(repeat.count(step)) << step << " in the repeat hit in " << text.str();
    }
}

TEST_F(MetricsLadder, AnUnwritableTraceIsReportedOnceAndRequestsGoOn) {
    std::mutex mu;
    std::vector<std::string> said;
    logging::set_sink([&](logging::Level, std::string_view m) {
        std::lock_guard g(mu);
        said.emplace_back(m);
    });
    Config c = config();
    c.trace = "/sys/kcache-trace.json";  // sysfs makes no files, even for root
    auto cache = open(c);
    ASSERT_EQ(dot(*cache, context_).outcome().status, StatusCode::ok);
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(dot(*cache, context_).outcome().rung, Rung::in_process);
    }
    std::lock_guard g(mu);
    std::vector<std::string> about_trace;  // other diagnostics may come (a driver canary)
    for (const std::string& m : said) {
        if (m.find("trace") != std::string::npos) {
            about_trace.push_back(m);
        }
    }
    ASSERT_EQ(about_trace.size(), 1u);
    EXPECT_NE(about_trace[0].find("/sys/kcache-trace.json"), std::string::npos) << about_trace[0];
}

}  // namespace
}  // namespace kcache::test
