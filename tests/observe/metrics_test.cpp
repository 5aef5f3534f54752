// The process's metrics (observe/src/metrics*.cpp, counters.cpp): fixed
// buckets, threads' cells summed once each (ended threads too), caches'
// counters summed (closed caches too) into a family per row of
// kcache_counters.def, the exposition formats read back by
// prometheus_client's parsers (check_exposition.py), counters that only
// grow, and the metrics file replaced atomically and reported once when it
// cannot be written.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "kcache/common/log.hpp"
#include "kcache/observe/counters.hpp"
#include "kcache/observe/metrics.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

using namespace std::chrono_literals;

// Runs check_exposition.py on `text`; returns its exit code and its lines.
std::pair<int, std::vector<std::string>> parse(const std::filesystem::path& dir,
                                               const std::string& text, const char* format) {
    const auto in = dir / "exposition.txt";
    std::ofstream(in) << text;
    const std::string cmd = std::string(KCACHE_TEST_PYTHON) + " " + KCACHE_CHECK_EXPOSITION + " " +
                            format + " < " + in.string() + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    std::vector<std::string> lines;
    char buf[4096];
    while (p != nullptr && std::fgets(buf, sizeof buf, p) != nullptr) {
        std::string line(buf);
        lines.push_back(line.substr(0, line.find('\n')));
    }
    const int status = p != nullptr ? ::pclose(p) : -1;
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, lines};
}

std::string exposition(metrics::Format format) {
    CacheStats s;
    metrics::snapshot(s);
    metrics::snapshot_counters(s);
    metrics::Exposition out(format);
    metrics::add_process_metrics(out, s);
    return out.finish();
}

// "name{labels} value" lines to a map.
std::map<std::string, double> samples(const std::vector<std::string>& lines) {
    std::map<std::string, double> m;
    for (const std::string& l : lines) {
        const auto sp = l.rfind(' ');
        m[l.substr(0, sp)] = std::stod(l.substr(sp + 1));
    }
    return m;
}

class MetricsText : public TempDirTest {};
class MetricsFile : public TempDirTest {};

TEST(MetricsRegistry, BucketsFollowTheFixedBounds) {
    EXPECT_EQ(metrics::bucket_of(0ns), 0u);
    EXPECT_EQ(metrics::bucket_of(-5ns), 0u);
    EXPECT_EQ(metrics::bucket_of(250ns), 0u);
    EXPECT_EQ(metrics::bucket_of(251ns), 1u);
    EXPECT_EQ(metrics::bucket_of(1us), 2u);
    EXPECT_EQ(metrics::bucket_of(1ms), 11u);
    EXPECT_EQ(metrics::bucket_of(100s), 26u);
    EXPECT_EQ(metrics::bucket_of(101s), 27u);
    EXPECT_EQ(kLatencyBuckets, 28u);
}

// Eight threads observe and end; a snapshot taken after counts every
// observation once (the ended threads' cells were added to the totals).
TEST(MetricsRegistry, ObservationsOfEndedThreadsAreCountedOnce) {
    CacheStats before;
    metrics::snapshot(before);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([] {
            for (int i = 0; i < 1000; ++i) {
                metrics::observe_request(Rung::user_store, StatusCode::ok, 3us);
                metrics::observe(metrics::Timer::load, 40us);
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    metrics::observe_request(Rung::none, StatusCode::timeout, 2s);
    CacheStats after;
    metrics::snapshot(after);
    const auto store = static_cast<std::size_t>(Rung::user_store);
    EXPECT_EQ(after.request.count - before.request.count, 8001u);
    EXPECT_EQ(after.answered[store].count - before.answered[store].count, 8000u);
    EXPECT_EQ(after.answered[store].buckets[4] - before.answered[store].buckets[4], 8000u);
    EXPECT_EQ(after.answered[store].sum_ns - before.answered[store].sum_ns, 8000u * 3000u);
    EXPECT_EQ(after.load.count - before.load.count, 8000u);
    EXPECT_EQ(after.requests[store][0] - before.requests[store][0], 8000u);
    const auto none = static_cast<std::size_t>(Rung::none);
    const auto timeout = static_cast<std::size_t>(StatusCode::timeout);
    EXPECT_EQ(after.requests[none][timeout] - before.requests[none][timeout], 1u);
}

TEST_F(MetricsText, ParsesInBothFormatsWithValidNamesAndTypes) {
    metrics::observe_request(Rung::jit, StatusCode::ok, 900ms);
    metrics::observe(metrics::Timer::compile, 850ms);
    metrics::observe(metrics::Timer::remote_put, 12ms);
    const std::string om = exposition(metrics::Format::openmetrics);
    EXPECT_NE(om.find("# TYPE kcache_requests counter\n"), std::string::npos) << om;
    EXPECT_EQ(om.substr(om.size() - 6), "# EOF\n");
    auto [code, lines] = parse(dir(), om, "openmetrics");
    ASSERT_EQ(code, 0) << (lines.empty() ? "" : lines.back());
    auto got = samples(lines);
    EXPECT_GE((got["kcache_requests_total{result=\"ok\",rung=\"jit\"}"]), 1.0);
    EXPECT_GE((got["kcache_compile_duration_seconds_bucket{le=\"1\"}"]), 1.0);
    EXPECT_GE((got["kcache_remote_duration_seconds_count{op=\"put\"}"]), 1.0);
    const std::string prom = exposition(metrics::Format::prometheus);
    EXPECT_NE(prom.find("# TYPE kcache_requests_total counter\n"), std::string::npos);
    auto [pcode, plines] = parse(dir(), prom, "prometheus");
    ASSERT_EQ(pcode, 0) << (plines.empty() ? "" : plines.back());
    // A document the parser rejects is reported as such (the checker can fail).
    auto [bad, why] = parse(dir(), om.substr(0, om.size() - 6), "openmetrics");
    EXPECT_EQ(bad, 1);
}

TEST_F(MetricsText, CountersOnlyGrowAcrossExpositions) {
    metrics::observe_request(Rung::in_process, StatusCode::ok, 200ns);
    auto first =
        samples(parse(dir(), exposition(metrics::Format::openmetrics), "openmetrics").second);
    for (int i = 0; i < 5; ++i) {
        metrics::observe_request(Rung::in_process, StatusCode::ok, 200ns);
        metrics::observe_request(Rung::pack, StatusCode::ok, 4ms);
    }
    auto second =
        samples(parse(dir(), exposition(metrics::Format::openmetrics), "openmetrics").second);
    ASSERT_FALSE(first.empty());
    for (const auto& [name, value] : first) {
        ASSERT_TRUE(second.count(name)) << name << " is gone";
        EXPECT_GE(second[name], value) << name;
    }
    EXPECT_EQ(second["kcache_requests_total{result=\"ok\",rung=\"in_process\"}"] -
                  first["kcache_requests_total{result=\"ok\",rung=\"in_process\"}"],
              5.0);
}

struct CounterRow {
    metrics::CounterSource source;
    std::string field;
};

// Every row of the .def, as the test reads it itself.
const std::vector<CounterRow>& counter_rows() {
    static const std::vector<CounterRow> rows = {
#define KCACHE_COUNTER(field, frozen, source, doc) {metrics::CounterSource::source, #field},
#include "kcache/kcache_counters.def"
#undef KCACHE_COUNTER
    };
    return rows;
}

// Two caches' counters, one closed before the exposition and one open: each
// row a cache counts itself is a counter family of its own whose sample
// grew by both caches' counts; the rows other parts keep (the store's, the
// remote client's, the program cache's) are in no family.
TEST_F(MetricsText, EveryRowACacheCountsIsAFamilyOfItsOwn) {
    auto before =
        samples(parse(dir(), exposition(metrics::Format::openmetrics), "openmetrics").second);
    metrics::CacheCounters open_one;
    {
        metrics::CacheCounters closed;
        for (std::size_t row = 0; row < metrics::kCounterRows; ++row) {
            for (std::size_t n = 0; n <= row; ++n) {
                closed.bump(row);
            }
            open_one.bump(row);
        }
    }
    const std::string om = exposition(metrics::Format::openmetrics);
    auto [code, lines] = parse(dir(), om, "openmetrics");
    ASSERT_EQ(code, 0) << (lines.empty() ? "" : lines.back());
    auto after = samples(lines);
    const std::string prom = exposition(metrics::Format::prometheus);
    ASSERT_EQ(parse(dir(), prom, "prometheus").first, 0);
    std::size_t families = 0;
    for (std::size_t row = 0; row < counter_rows().size(); ++row) {
        const std::string family = "kcache_" + counter_rows()[row].field;
        const std::string sample = family + "_total{}";
        if (counter_rows()[row].source != metrics::CounterSource::cache) {
            EXPECT_EQ(om.find(family + "_total"), std::string::npos) << family;
            continue;
        }
        ++families;
        EXPECT_NE(om.find("# TYPE " + family + " counter\n"), std::string::npos) << family;
        EXPECT_NE(om.find("# HELP " + family + " "), std::string::npos) << family;
        EXPECT_NE(prom.find("# TYPE " + family + "_total counter\n"), std::string::npos) << family;
        ASSERT_TRUE(after.count(sample)) << sample << " missing from\n" << om;
        EXPECT_EQ(after[sample] - before[sample], static_cast<double>(row + 2)) << sample;
    }
    EXPECT_GE(families, 10u);  // in_process_hits … il_builds
    EXPECT_EQ(counter_rows().size(), metrics::kCounterRows);
}

TEST_F(MetricsText, LabelValuesAreEscaped) {
    EXPECT_EQ(metrics::label("device", "a\"b\\c\nd"), "device=\"a\\\"b\\\\c\\nd\"");
}

// The file is replaced whole (never seen half-written) and follows the
// process's counts at its interval.
TEST_F(MetricsFile, IsWrittenAtomicallyAtItsInterval) {
    const auto target = dir() / "kcache-%p.prom";
    const auto file = dir() / ("kcache-" + std::to_string(::getpid()) + ".prom");
    metrics::write_file_periodically(target, 100ms);
    std::map<std::string, double> seen;
    const std::string key = "kcache_requests_total{result=\"ok\",rung=\"aot\"}";
    metrics::observe_request(Rung::aot, StatusCode::ok, 1ms);
    for (int i = 0; i < 50 && seen[key] < 1; ++i) {
        std::this_thread::sleep_for(50ms);
        std::ifstream in(file);
        std::stringstream text;
        text << in.rdbuf();
        auto [code, lines] = parse(dir(), text.str(), "prometheus");
        if (!text.str().empty()) {
            ASSERT_EQ(code, 0) << text.str();  // every version read is whole
            seen = samples(lines);
        }
    }
    EXPECT_GE(seen[key], 1.0);
    metrics::write_file_periodically({}, 15s);  // no more writes
    std::this_thread::sleep_for(200ms);
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir())) {
        ++entries;  // no temporary file left behind
    }
    EXPECT_EQ(entries, 2u);  // the file and exposition.txt
}

TEST_F(MetricsFile, ThatCannotBeWrittenIsReportedOnce) {
    std::mutex mu;
    std::vector<std::string> warnings;
    logging::set_sink([&](logging::Level, std::string_view m) {
        std::lock_guard g(mu);
        warnings.emplace_back(m);
    });
    metrics::write_file_periodically(dir() / "missing" / "kcache.prom", 100ms);
    std::this_thread::sleep_for(600ms);
    metrics::write_file_periodically({}, 15s);
    std::this_thread::sleep_for(100ms);
    logging::set_sink({});
    std::lock_guard g(mu);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("missing/kcache.prom"), std::string::npos) << warnings[0];
}

}  // namespace
}  // namespace kcache::test
