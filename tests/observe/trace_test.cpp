// The request trace (observe/src/trace*.cpp) without a device: records from
// 4 processes × 8 threads at once make one valid trace (JSON Array Format:
// the file plus "]" parses, every event whole); the size bound holds; a
// location that cannot be opened or written is reported once; the stderr
// form is one line per request through the log sink.

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "child_process.hpp"
#include "kcache/common/log.hpp"
#include "kcache/observe/trace.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

using nlohmann::json;

constexpr int kThreads = 8;
constexpr int kRequests = 40;

class Trace : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        logging::set_sink([this](logging::Level, std::string_view m) {
            std::lock_guard g(mu_);
            logged_.emplace_back(m);
        });
    }
    void TearDown() override {
        trace::configure("", 0);
        logging::set_sink({});
        TempDirTest::TearDown();
    }
    std::vector<std::string> logged() {
        std::lock_guard g(mu_);
        return logged_;
    }

  private:
    std::mutex mu_;
    std::vector<std::string> logged_;
};

// One traced request with a span inside, as the service records them.
void traced_request(int i) {
    const auto start = trace::Clock::now();
    trace::Request request;
    {
        trace::Span load("load", "load");
        load.arg("bytes", std::to_string(1000 + i));
    }
    trace::Asked asked;
    asked.device = "cpu \"quoted\"";
    if (i % 2 == 0) {
        asked.kernel = "dot";
        asked.params = {{"dtype", "f32"}};
    } else {
        asked.name = "mine";
        asked.source = "kernel void k(global int* x) { x[0] = " + std::to_string(i % 3) + "; }";
        asked.options = "-cl-fast-relaxed-math";
    }
    Outcome o;
    o.status = StatusCode::ok;
    o.rung = Rung::user_store;
    o.key = std::string(64, 'a');
    o.misses.emplace_back(Rung::in_process, MissCause::not_in_process, "not in process");
    request.finish(start, asked, o);
}

void write_requests(int count) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([count] {
            for (int i = 0; i < count; ++i) {
                traced_request(i);
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
}

// The events of a trace file: its text plus the optional "]".
json read_trace(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    return json::parse(text.str() + "]");
}

TEST_F(Trace, FourProcessesOfEightThreadsWriteOneValidTrace) {
    if (child_role() == "writer") {
        if (wait_for_start_gate()) {
            trace::configure(child_env("TRACE"), 1ull << 30);
            write_requests(kRequests);
        }
        return;
    }
    const auto file = dir() / "trace.json";
    auto group = ChildGroup::spawn(4, "writer", {{"TRACE", file.string()}});
    group.release();
    for (const ChildResult& r : group.wait_all(std::chrono::seconds(120))) {
        ASSERT_TRUE(r.ok()) << r.describe();
    }
    json events;
    ASSERT_NO_THROW(events = read_trace(file));
    ASSERT_TRUE(events.is_array());
    std::set<int> pids;
    std::set<std::pair<int, long>> threads;
    std::set<std::string> sources;
    int requests = 0, loads = 0;
    for (const json& e : events) {
        ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name")) << e.dump();
        if (e["name"] == "request") {
            ++requests;
            pids.insert(e["pid"].get<int>());
            threads.insert({e["pid"].get<int>(), e["tid"].get<long>()});
            EXPECT_EQ(e["ph"], "X");
            EXPECT_EQ(e["args"]["key"], std::string(16, 'a'));
            EXPECT_EQ(e["args"]["result"], "HIT");
            EXPECT_EQ(e["args"]["misses"][0]["cause"], "not_in_process");
        } else if (e["name"] == "load") {
            ++loads;
            EXPECT_GE(e["dur"].get<double>(), 0.0);
        } else if (e["name"] == "source") {
            sources.insert(std::to_string(e["pid"].get<int>()) +
                           e["args"]["sha256"].get<std::string>());
            EXPECT_NE(e["args"]["text"].get<std::string>().find("kernel void k"),
                      std::string::npos);
        }
    }
    EXPECT_EQ(requests, 4 * kThreads * kRequests);
    EXPECT_EQ(loads, requests);
    EXPECT_EQ(pids.size(), 4u);
    EXPECT_EQ(threads.size(), 4u * kThreads);
    EXPECT_EQ(sources.size(), 4u * 3u) << "each process writes each source's text once";
}

TEST_F(Trace, NoRecordTakesTheFilePastItsBound) {
    const auto file = dir() / "trace.json";
    trace::configure(file.string(), 16384);
    write_requests(20);  // ~160 records of ~600 bytes: far more than the bound
    EXPECT_LE(std::filesystem::file_size(file), 16384u);
    EXPECT_GT(std::filesystem::file_size(file), 8192u);
    EXPECT_NO_THROW(read_trace(file));
    auto said = logged();
    ASSERT_EQ(said.size(), 1u);
    EXPECT_NE(said[0].find("size bound of 16384"), std::string::npos) << said[0];
    EXPECT_FALSE(trace::on());
}

TEST_F(Trace, ALocationThatCannotBeOpenedIsReportedOnce) {
    trace::configure("/sys/kcache-trace.json", 1 << 20);  // sysfs makes no files, even for root
    EXPECT_FALSE(trace::on());
    write_requests(3);
    auto said = logged();
    ASSERT_EQ(said.size(), 1u);
    EXPECT_NE(said[0].find("cannot open"), std::string::npos) << said[0];
}

TEST_F(Trace, AFullLocationIsReportedOnce) {
    trace::configure("/dev/full", 1 << 20);  // every write fails with ENOSPC
    EXPECT_TRUE(trace::on());
    write_requests(3);
    EXPECT_FALSE(trace::on());
    auto said = logged();
    ASSERT_EQ(said.size(), 1u);
    EXPECT_NE(said[0].find("No space left"), std::string::npos) << said[0];
}

TEST_F(Trace, StderrFormIsOneLinePerRequestThroughTheLogSink) {
    trace::configure("stderr", 0);
    traced_request(0);
    traced_request(1);
    auto said = logged();
    ASSERT_EQ(said.size(), 2u);
    EXPECT_EQ(said[0].rfind("trace: HIT user_store aaaaaaaaaaaaaaaa ", 0), 0u) << said[0];
    EXPECT_NE(said[0].find(" ms dot dtype=f32"), std::string::npos) << said[0];
    EXPECT_NE(said[1].find(" ms mine"), std::string::npos) << said[1];
}

// KCACHE_TRACE=1 (what the layer's users write) means lines, not a file named "1".
TEST_F(Trace, OneMeansTheLinesThroughTheLogSinkNotAFileNamedOne) {
    const auto cwd = std::filesystem::current_path();
    std::filesystem::current_path(dir());
    trace::configure("1", 0);
    traced_request(0);
    std::filesystem::current_path(cwd);
    auto said = logged();
    ASSERT_EQ(said.size(), 1u);
    EXPECT_EQ(said[0].rfind("trace: HIT user_store ", 0), 0u) << said[0];
    EXPECT_FALSE(std::filesystem::exists(dir() / "1"));
}

TEST_F(Trace, OffCostsNothingAndWritesNothing) {
    trace::configure("", 0);
    EXPECT_FALSE(trace::on());
    traced_request(0);
    EXPECT_TRUE(logged().empty());
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir())) {
        ++files;
    }
    EXPECT_EQ(files, 0u);
}

}  // namespace
}  // namespace kcache::test
