// What the driver canary says on a process's stderr, on PoCL under the test
// layer, in a real process (this binary re-executed): nothing by default when
// every variant validated, the result at KCACHE_LOG_LEVEL=info, and a warning
// when the driver is suspect.

#include <gtest/gtest.h>

#include "canary_support.hpp"
#include "child_process.hpp"
#include "kcache/canary/canary.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "kcache/service/service_api.hpp"

namespace kcache::test {
namespace {

class CanaryLogLevel : public FaultLayerContextTest {
  protected:
    // Runs this test's child body (one request for dot on a store of its
    // own, the canary under warn) with `env`; returns what it wrote on
    // stderr. Fails the test when the child does not end well.
    std::string child_stderr(const std::string& name, std::vector<std::string> env) {
        compiler::SpawnSpec spec;
        spec.program = "/proc/self/exe";
        spec.args = {"--gtest_filter=" + current_test_filter()};
        env.push_back(std::string(kChildRoleEnv) + "=request");
        env.push_back("KCACHE_TEST_CHILD_ENV_STORE=" + (dir() / name).string());
        spec.env_overrides = std::move(env);
        auto r = compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(180));
        EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
        EXPECT_NE(r.out.find("[  PASSED  ] 1 test"), std::string::npos) << r.out;
        return r.err;
    }

    // The stored verdicts of the test device under driver `driver` in `name`.
    std::optional<canary::Record> record(const std::string& name, const std::string& driver) {
        device_db::DeviceIdentity d = test_device();
        d.driver_version = driver;
        return canary::load_record(canary::canary_dir(dir() / name), canary::driver_identity(d));
    }

    // The child's body: closing the cache waits for the canary it started.
    void request_dot() {
        auto cache = Cache::open(canary_config(child_env("STORE"), CanaryPolicy::warn));
        ASSERT_TRUE(cache);
        Program dot = cache->program(context_, device_, kernel_request("dot"));
        EXPECT_EQ(dot.outcome().status, StatusCode::ok) << dot.outcome().message;
    }
};

TEST_F(CanaryLogLevel, AValidatedCanaryWritesNothingByDefault) {
    if (child_role() == "request") {
        return request_dot();
    }
    const std::string err = child_stderr("quiet", {"KCACHE_FAULT_DRIVER=9.4-quiet"});
    EXPECT_EQ(err.find("kcache"), std::string::npos) << err;
    auto stored = record("quiet", "9.4-quiet");
    ASSERT_TRUE(stored) << "the canary did not run";
    EXPECT_FALSE(stored->suspect());
}

TEST_F(CanaryLogLevel, InfoShowsTheValidatedCanary) {
    if (child_role() == "request") {
        return request_dot();
    }
    const std::string err =
        child_stderr("info", {"KCACHE_FAULT_DRIVER=9.4-info", "KCACHE_LOG_LEVEL=info"});
    EXPECT_NE(err.find("kcache: info: driver canary on"), std::string::npos) << err;
    EXPECT_EQ(err.find("kcache: warning"), std::string::npos) << err;
    EXPECT_EQ(err.find("SUSPECT"), std::string::npos) << err;
}

TEST_F(CanaryLogLevel, ASuspectDriverWarnsByDefault) {
    if (child_role() == "request") {
        return request_dot();
    }
    // dot's partial sums subtract instead of add: its known-answer test fails.
    const std::string err = child_stderr(
        "suspect", {"KCACHE_FAULT_MATCH=dot_partial", "KCACHE_FAULT_SOURCE_FROM=acc += KC_PRODUCT",
                    "KCACHE_FAULT_SOURCE_TO=acc -= KC_PRODUCT", "KCACHE_FAULT_DRIVER=9.4-suspect"});
    EXPECT_NE(err.find("kcache: warning: driver canary on"), std::string::npos) << err;
    EXPECT_NE(err.find("SUSPECT for dot:"), std::string::npos) << err;
}

TEST_F(CanaryLogLevel, AnUnknownLevelIsSaidAndWarningIsUsed) {
    if (child_role() == "request") {
        return request_dot();
    }
    const std::string err =
        child_stderr("typo", {"KCACHE_FAULT_DRIVER=9.4-typo", "KCACHE_LOG_LEVEL=verbose"});
    EXPECT_NE(err.find("KCACHE_LOG_LEVEL=\"verbose\": expected error, warning, info or debug"),
              std::string::npos)
        << err;
    EXPECT_EQ(err.find("driver canary on"), std::string::npos) << err;
}

}  // namespace
}  // namespace kcache::test
