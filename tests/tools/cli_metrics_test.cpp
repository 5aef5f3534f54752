// `kcache stats --format openmetrics|prometheus`: the node's metrics parse
// with prometheus_client's parsers (tests/observe/check_exposition.py checks
// names and types), sizes are by device, and counters only grow between
// calls while other processes use the store.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "cli_store_fixture.hpp"

namespace kcache::test {
namespace {

class CliMetrics : public CliStoreTest {
  protected:
    // The samples of `text` after the checker accepted it in `format`.
    std::map<std::string, double> parsed(const std::string& text, const char* format) {
        const auto in = dir() / "exposition.txt";
        std::ofstream(in) << text;
        const std::string cmd = std::string("/usr/bin/python3 ") + KCACHE_CHECK_EXPOSITION + " " +
                                format + " < " + in.string() + " 2>&1";
        FILE* p = ::popen(cmd.c_str(), "r");
        std::map<std::string, double> samples;
        std::string all;
        char buf[4096];
        while (p != nullptr && std::fgets(buf, sizeof buf, p) != nullptr) {
            std::string line(buf);
            line = line.substr(0, line.find('\n'));
            all += line + "\n";
            const auto sp = line.rfind(' ');
            if (sp != std::string::npos) {
                samples[line.substr(0, sp)] = std::atof(line.substr(sp + 1).c_str());
            }
        }
        const int status = p != nullptr ? ::pclose(p) : -1;
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << all << text;
        return samples;
    }
};

TEST_F(CliMetrics, OpenMetricsParsesAndItsCountersOnlyGrow) {
    fill(3);
    const CliRun first = kcache({"stats", "--format", "openmetrics"});
    ASSERT_EQ(first.code, 0) << first.err;
    auto before = parsed(first.out, "openmetrics");
    const std::string device = sample_fields(0).device_name;
    double entries = 0;
    for (const auto& [name, value] : before) {
        if (name.rfind("kcache_store_entries{", 0) == 0) {
            entries += value;
        }
    }
    EXPECT_EQ(entries, 3.0) << first.out;
    {  // another process's hits and a miss, counted by the store
        auto store = ks::Store::open(store_dir());
        ASSERT_TRUE(store.ok());
        for (int i = 0; i < 3; ++i) {
            EXPECT_TRUE(store->get(sample_fields(i)).ok());
        }
        EXPECT_FALSE(store->get(sample_fields(7)).ok());
    }
    const CliRun second = kcache({"stats", "--format", "openmetrics"});
    ASSERT_EQ(second.code, 0) << second.err;
    auto after = parsed(second.out, "openmetrics");
    for (const auto& [name, value] : before) {
        if (name.find("_total{") != std::string::npos) {
            ASSERT_TRUE(after.count(name)) << name << " is gone";
            EXPECT_GE(after[name], value) << name;
        }
    }
    const std::string hits = "kcache_store_lookups_total{result=\"hit\",tier=\"user\"}";
    EXPECT_EQ(after[hits] - before[hits], 3.0) << second.out;
}

TEST_F(CliMetrics, PrometheusFormatParsesAndBadFormatsAreUsageErrors) {
    fill(1);
    const CliRun r = kcache({"stats", "--format", "prometheus"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.find("# EOF"), std::string::npos);
    EXPECT_NE(r.out.find("# TYPE kcache_store_evictions_total counter"), std::string::npos);
    EXPECT_FALSE(parsed(r.out, "prometheus").empty());
    const CliRun bad = kcache({"stats", "--format", "yaml"});
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("openmetrics"), std::string::npos) << bad.err;
    EXPECT_EQ(kcache({"stats", "--format", "json"}).json()["entries"], 1);
}

// doctor shows each observability setting's effective value and origin.
TEST_F(CliMetrics, DoctorShowsTheObservabilitySettings) {
    const CliRun r = kcache({"doctor", "--json"},
                            {"KCACHE_METRICS_FILE=/var/lib/m-%p.prom", "KCACHE_TRACE_MAX_SIZE=1M"});
    std::map<std::string, std::string> config;
    for (const auto& f : r.json()) {
        if (f["section"] == "config") {
            config[f["name"].get<std::string>()] = f["value"].get<std::string>();
        }
    }
    EXPECT_NE(config["metrics_file"].find("/var/lib/m-%p.prom"), std::string::npos) << r.out;
    EXPECT_NE(config["trace_max_size"].find("1048576 (1.0 MiB)"), std::string::npos) << r.out;
    EXPECT_NE(config["metrics"].find("true"), std::string::npos) << r.out;
    EXPECT_NE(config["trace"].find("(off)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kcache::test
