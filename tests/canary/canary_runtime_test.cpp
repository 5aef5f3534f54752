// The driver canary at run time, on PoCL under the test layer: the first
// request on a driver with no verdict runs the canary before anything is
// served; a miscompiled kernel is answered driver_suspect under enforce,
// served with a warning under warn, and nothing runs under off. Through the
// C++ API, the C API and the CLI.

#include <gtest/gtest.h>

#include "canary_support.hpp"
#include "child_process.hpp"
#include "jit_support.hpp"
#include "kcache/canary/canary.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "kcache/kcache.h"
#include "kcache/service/service_api.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

// The faults of a driver that reports version `driver` and miscompiles dot:
// its partial sums subtract instead of add, so dot's KAT fails and the others
// pass.
std::vector<std::string> dot_miscompiled_by(const std::string& driver) {
    return {"KCACHE_FAULT_MATCH=dot_partial", "KCACHE_FAULT_SOURCE_FROM=acc += KC_PRODUCT",
            "KCACHE_FAULT_SOURCE_TO=acc -= KC_PRODUCT", "KCACHE_FAULT_DRIVER=" + driver};
}

class CanaryRuntime : public FaultLayerContextTest {
  protected:
    Config config(CanaryPolicy policy) const { return canary_config(dir() / "store", policy); }

    // The stored verdicts of the driver `driver` of the test device.
    std::optional<canary::Record> record(const std::string& driver) const {
        device_db::DeviceIdentity d = test_device();
        d.driver_version = driver;
        return canary::load_record(canary::canary_dir(dir() / "store"), canary::driver_identity(d));
    }
};

TEST_F(CanaryRuntime, EnforceAnswersTheMiscompiledKernelDriverSuspectAndServesTheRest) {
    ScopedEnv faults(dot_miscompiled_by("9.1-enforce"));
    auto cache = Cache::open(config(CanaryPolicy::enforce));
    ASSERT_TRUE(cache);
    Program dot = cache->program(context_, device_, kernel_request("dot"));
    EXPECT_EQ(dot.outcome().status, StatusCode::driver_suspect) << dot.outcome().message;
    EXPECT_EQ(dot.get(), nullptr);
    EXPECT_NE(dot.outcome().message.find("suspect for dot:"), std::string::npos)
        << dot.outcome().message;
    // Another variant of dot is covered by its kernel's verdict.
    Program dot16 = cache->program(context_, device_, kernel_request("dot", {{"dtype", "f16"}}));
    EXPECT_EQ(dot16.outcome().status, StatusCode::driver_suspect);
    Program conv = cache->program(context_, device_, kernel_request("conv2d"));
    EXPECT_EQ(conv.outcome().status, StatusCode::ok) << conv.outcome().message;
    EXPECT_EQ(to_string(StatusCode::driver_suspect), std::string("driver_suspect"));
    auto stored = record("9.1-enforce");
    ASSERT_TRUE(stored);
    EXPECT_TRUE(stored->suspect());
}

TEST_F(CanaryRuntime, WarnServesTheMiscompiledKernelAndWarnsOnceTheCanaryHasRun) {
    ScopedEnv faults(dot_miscompiled_by("9.1-warn"));
    LogLines log;
    {
        auto cache = Cache::open(config(CanaryPolicy::warn));
        ASSERT_TRUE(cache);
        Program dot = cache->program(context_, device_, kernel_request("dot"));
        EXPECT_EQ(dot.outcome().status, StatusCode::ok) << dot.outcome().message;
    }  // closing the cache waits for the canary it started
    EXPECT_NE(log.text().find("SUSPECT for dot:"), std::string::npos) << log.text();
    auto stored = record("9.1-warn");
    ASSERT_TRUE(stored);
    EXPECT_TRUE(stored->suspect());
    // Now that the verdict is known, serving the suspect variant is logged,
    // after the answer (the gates under warn run on a worker of the cache).
    auto cache = Cache::open(config(CanaryPolicy::warn));
    ASSERT_TRUE(cache);
    Program dot = cache->program(context_, device_, kernel_request("dot"));
    EXPECT_EQ(dot.outcome().status, StatusCode::ok) << dot.outcome().message;
    EXPECT_NE(dot.get(), nullptr);
    cache.reset();  // waits for its workers
    EXPECT_NE(log.text().find("served anyway"), std::string::npos) << log.text();
}

TEST_F(CanaryRuntime, WarnServesTheFirstRequestWithoutWaitingForTheCanary) {
    // batchnorm's known-answer test hangs: the canary ends only at its
    // deadline (the JIT deadline, 10 s here), long after dot is compiled.
    ScopedEnv faults({"KCACHE_FAULT_HANG=batchnorm_inference", "KCACHE_FAULT_DRIVER=9.1-bg"});
    Config c = config(CanaryPolicy::warn);
    c.jit_timeout = std::chrono::seconds(10);
    auto cache = Cache::open(c);
    ASSERT_TRUE(cache);
    const auto start = std::chrono::steady_clock::now();
    Program dot = cache->program(context_, device_, kernel_request("dot"));
    EXPECT_EQ(dot.outcome().status, StatusCode::ok) << dot.outcome().message;
    EXPECT_FALSE(record("9.1-bg")) << "the request waited for the canary";
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    cache.reset();  // waits for the canary
    auto stored = record("9.1-bg");
    ASSERT_TRUE(stored);
    EXPECT_TRUE(stored->suspect());
}

// Child body of TwoCachesOnOneStoreRunTheCanaryOncePerDriver: one request
// under enforce; reports "ran" when this process ran the canary.
void request_dot_as_child(cl_context context, cl_device_id device, const Config& c) {
    ASSERT_TRUE(wait_for_start_gate());
    LogLines log;
    auto cache = Cache::open(c);
    ASSERT_TRUE(cache);
    Program dot = cache->program(context, device, kernel_request("dot"));
    report_line(std::string(to_string(dot.outcome().status)) +
                (log.text().find("driver canary on") != std::string::npos ? " ran" : " read"));
}

TEST_F(CanaryRuntime, TwoCachesOnOneStoreRunTheCanaryOncePerDriver) {
    Config c = config(CanaryPolicy::enforce);
    if (child_role() == "cache") {
        c.dir = child_env("STORE");
        return request_dot_as_child(context_, device_, c);
    }
    // Each cache runs in a process of its own; a driver update between them.
    auto run = [&](const std::string& driver, int caches) {
        ScopedEnv reported({"KCACHE_FAULT_DRIVER=" + driver});
        auto group = ChildGroup::spawn(caches, "cache", {{"STORE", c.dir.string()}});
        group.release();
        int ran = 0;
        for (const ChildResult& r : group.wait_all(std::chrono::seconds(180))) {
            EXPECT_TRUE(r.ok()) << r.describe();
            EXPECT_EQ(r.lines.size(), 1u) << r.describe();
            for (const std::string& line : r.lines) {
                EXPECT_EQ(line.substr(0, 3), "ok ") << line;
                ran += line.ends_with(" ran") ? 1 : 0;
            }
        }
        return ran;
    };
    EXPECT_EQ(run("9.3-a", 1), 1);
    EXPECT_EQ(run("9.3-b", 2), 1) << "two caches ran the canary of one driver";
    EXPECT_EQ(run("9.3-b", 1), 0);
    EXPECT_TRUE(record("9.3-a"));
    EXPECT_TRUE(record("9.3-b"));
}

TEST_F(CanaryRuntime, OffRunsNoCanary) {
    ScopedEnv faults(dot_miscompiled_by("9.1-off"));
    auto cache = Cache::open(config(CanaryPolicy::off));
    ASSERT_TRUE(cache);
    Program dot = cache->program(context_, device_, kernel_request("dot"));
    EXPECT_EQ(dot.outcome().status, StatusCode::ok) << dot.outcome().message;
    EXPECT_FALSE(std::filesystem::exists(dir() / "store" / "canary"));
}

TEST_F(CanaryRuntime, TheCApiAnswersKcacheStatusDriverSuspect) {
    std::vector<std::string> env = dot_miscompiled_by("9.1-c");
    env.push_back("KCACHE_CANARY=enforce");
    env.push_back("KCACHE_DIR=" + (dir() / "store").string());
    env.push_back(std::string("KCACHE_JIT_PATH=") + jit_helper_path());
    ScopedEnv faults(env);
    kcache_cache* cache = nullptr;
    ASSERT_EQ(kcache_open(&cache), KCACHE_STATUS_OK) << kcache_last_error();
    kcache_kernel_request r = KCACHE_KERNEL_REQUEST_INIT;
    r.kernel = "dot";
    cl_program p = nullptr;
    EXPECT_EQ(kcache_get_kernel_program(cache, context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_DRIVER_SUSPECT);
    EXPECT_EQ(p, nullptr);
    EXPECT_NE(std::string(kcache_last_error()).find("suspect"), std::string::npos);
    EXPECT_STREQ(kcache_status_name(KCACHE_STATUS_DRIVER_SUSPECT), "KCACHE_STATUS_DRIVER_SUSPECT");
    kcache_close(cache);
}

TEST_F(CanaryRuntime, TheCliRunsTheCanaryAndShowsTheVerdicts) {
    std::vector<std::string> env = dot_miscompiled_by("9.1-cli");
    env.push_back("KCACHE_DIR=" + (dir() / "store").string());
    compiler::SpawnSpec spec;
    spec.program = KCACHE_CLI_PATH;
    spec.args = {"canary", "--seed", "17", "--json"};
    spec.env_overrides = env;
    auto r = compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(120));
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // a suspect verdict
    EXPECT_NE(r.out.find("\"suspect\": true"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"seed\": 17"), std::string::npos) << r.out;
    spec.args = {"canary", "--show"};
    r = compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(60));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("dot:dtype=f32,arith=f32,ls=256  suspect"), std::string::npos) << r.out;
    spec.args = {"doctor"};
    r = compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(60));
    EXPECT_NE(r.out.find("PROBLEM canary.verdicts"), std::string::npos) << r.out;
    spec.args = {"stats"};
    r = compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(60));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // The miscompiled dot source breaks every dot path the canary runs.
    EXPECT_NE(r.out.find(" suspect (dot:dtype=f32,arith=f32,ls=256"), std::string::npos) << r.out;
    spec.args = {"stats", "--json"};
    r = compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(60));
    EXPECT_NE(r.out.find("\"suspects\": [\n        \"dot:"), std::string::npos) << r.out;
    spec.args = {"explain", "dot"};
    r = compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(60));
    EXPECT_NE(r.out.find("driver canary: suspect"), std::string::npos) << r.out;
    spec.args = {"canary", "--seed", "x"};
    r = compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(60));
    EXPECT_EQ(r.exit_code, 2) << r.err;
}

}  // namespace
}  // namespace kcache::test
