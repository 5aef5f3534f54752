// The canary against faults a real driver produces, injected into PoCL by the
// test layer: every wrong answer (miscompiled, or corrupted when read back
// after the kernel ran, on every precision path and at real sizes), hang and
// crash is a suspect verdict; clean drivers (three simulated versions) and
// results an ulp or two away give no suspect one.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "canary_support.hpp"
#include "faults.hpp"
#include "kcache/canary/canary.hpp"
#include "kcache/cl/kat.hpp"
#include "temp_dir.hpp"

namespace kcache::canary {
namespace {

class CanaryFaults : public test::FaultLayerTest {
  protected:
    void SetUp() override {
        test::FaultLayerTest::SetUp();
        device_ = test::test_device();
    }

    // The verdict of the canary of `variant` on the device, with `driver` as
    // its reported version, under the faults of `env`.
    Verdict run(const std::string& variant, const std::vector<std::string>& env,
                const std::string& driver, std::chrono::milliseconds timeout = kTimeout) {
        std::vector<std::string> settings = env;
        settings.push_back("KCACHE_FAULT_DRIVER=" + driver);
        test::ScopedEnv scoped(settings);
        device_db::DeviceIdentity d = device_;
        d.driver_version = driver;
        RunOptions o{test::verify_helper(), 1234, timeout, 0};
        Record r = run_canary(d, {*kernels::parse_variant(variant)}, o);
        EXPECT_EQ(r.identity.driver, driver);
        return r.verdicts.at(0);
    }

    static constexpr std::chrono::milliseconds kTimeout{60'000};
    device_db::DeviceIdentity device_;
};

TEST_F(CanaryFaults, CleanDriverVersionsValidateEverySupportedVariant) {
    int validated = 0, unsupported = 0;
    for (const char* driver : {"3.1-clean-a", "3.1-clean-b", "3.2-clean-c"}) {
        for (const kernels::Variant& v : kernels::all_variants()) {
            const Verdict verdict = run(v.id(), {}, driver);
            if (verdict.check == "unsupported") {
                ++unsupported;
                continue;
            }
            EXPECT_EQ(verdict.state, VerdictState::validated)
                << driver << " " << v.id() << ": " << verdict.detail;
            validated += verdict.state == VerdictState::validated ? 1 : 0;
        }
    }
    EXPECT_GE(validated, 3 * 20);
    std::cout << "validated " << validated << " (" << unsupported << " unsupported)\n";
}

TEST_F(CanaryFaults, FastMathWithinToleranceIsNotAFalsePositive) {
    // -cl-fast-relaxed-math changes no answer of these kernels on PoCL beyond
    // the kernels' tolerances: the canary judges answers, not flags.
    for (const char* v :
         {"dot:dtype=f32,arith=f32,ls=256", "conv2d:dtype=f32,act=none,ls=64",
          "qconv_pointwise:out=f32,act=none,ls=64", "batchnorm:dtype=f32,act=none,ls=256"}) {
        const Verdict verdict =
            run(v, {"KCACHE_FAULT_OPTIONS_ADD=-cl-fast-relaxed-math"}, "3.1-fm");
        EXPECT_EQ(verdict.state, VerdictState::validated) << v << ": " << verdict.detail;
    }
}

TEST_F(CanaryFaults, EveryInjectedWrongAnswerIsSuspect) {
    const auto faults = test::wrong_answer_faults();
    int caught = 0;
    for (const test::Fault& f : faults) {
        const Verdict verdict = run(f.variant, f.env, "3.1-broken");
        EXPECT_EQ(verdict.state, VerdictState::suspect) << f.name << ": " << verdict.detail;
        EXPECT_FALSE(verdict.check.empty()) << f.name;
        caught += verdict.state == VerdictState::suspect ? 1 : 0;
    }
    std::cout << "caught " << caught << " of " << faults.size() << " injected faults\n";
    EXPECT_GE(faults.size(), 50u);
}

TEST_F(CanaryFaults, AHangingKnownAnswerTestIsATimeoutVerdict) {
    for (const test::Fault& f : test::hang_faults()) {
        const auto start = std::chrono::steady_clock::now();
        const Verdict verdict = run(f.variant, f.env, "3.1-hang", std::chrono::seconds(4));
        EXPECT_EQ(verdict.state, VerdictState::suspect) << f.name;
        EXPECT_EQ(verdict.check, "timeout") << f.name << ": " << verdict.detail;
        EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    }
}

TEST_F(CanaryFaults, AKnownAnswerTestThatCrashesIsACrashedVerdict) {
    for (const test::Fault& f : test::crash_faults()) {
        const Verdict verdict = run(f.variant, f.env, "3.1-crash");
        EXPECT_EQ(verdict.state, VerdictState::suspect) << f.name;
        EXPECT_EQ(verdict.check, "crashed") << f.name << ": " << verdict.detail;
    }
}

TEST_F(CanaryFaults, TheDefaultSetCoversEveryKernelAndRecordsItsSeed) {
    test::ScopedEnv scoped({"KCACHE_FAULT_DRIVER=3.1-default"});
    device_db::DeviceIdentity d = device_;
    d.driver_version = "3.1-default";
    const auto set = default_set(d);
    // One variant per precision path the device supports, each activation run.
    std::set<std::string> paths, acts;
    for (const kernels::Variant& v : kernels::all_variants()) {
        if (cl::has_kat(v.kernel) && kernels::check_support(v, d.extensions)) {
            paths.insert(v.kernel + ":" + kernels::precision_path(v));
            acts.insert(v.kernel + ":" + std::string(v.get("act")));
        }
    }
    std::set<std::string> run_paths, run_acts;
    for (const kernels::Variant& v : set) {
        EXPECT_TRUE(run_paths.insert(v.kernel + ":" + kernels::precision_path(v)).second) << v.id();
        run_acts.insert(v.kernel + ":" + std::string(v.get("act")));
    }
    EXPECT_EQ(run_paths, paths);
    EXPECT_EQ(run_acts, acts);
    EXPECT_GE(set.size(), 10u);  // PoCL: 3 conv2d, 2 qconv, 3 dot, 3 batchnorm
    RunOptions o{test::verify_helper(), 777, kTimeout, 0};
    const Record r = run_canary(d, set, o);
    EXPECT_EQ(r.seed, 777u);
    for (const Verdict& v : r.verdicts) {
        EXPECT_EQ(v.state, VerdictState::validated) << v.variant << ": " << v.detail;
        EXPECT_EQ(v.seed, 777u);
        EXPECT_TRUE(v.max_error) << v.variant;
    }
    std::cout << "default set: " << set.size() << " variants in " << r.wall_ms << " ms\n";
}

// The element type a variant's results are read back as.
std::string output_type(const kernels::Variant& v) {
    const std::string_view t = v.kernel == "qconv_pointwise" ? v.get("out") : v.get("dtype");
    return std::string(t);
}

std::vector<std::string> read_fault(const kernels::Variant& v, const std::string& kind,
                                    std::size_t min_bytes = 0) {
    return {"KCACHE_FAULT_READ=" + kind, "KCACHE_FAULT_READ_TYPE=" + output_type(v),
            "KCACHE_FAULT_READ_MIN_BYTES=" + std::to_string(min_bytes)};
}

// A driver whose code generation is wrong: what it computes is corrupted
// after the kernel ran, on every precision path the canary runs by default,
// on every read or only on reads of real-sized outputs (64 KiB or more).
TEST_F(CanaryFaults, EveryWrongResultOnEveryPrecisionPathAndSizeIsSuspect) {
    int injected = 0, caught = 0;
    for (const kernels::Variant& v : default_set(device_)) {
        for (const char* kind : {"zero", "flip97", "scale", "tail16", "nan1", "one", "swap"}) {
            const Verdict verdict = run(v.id(), read_fault(v, kind), "3.1-codegen");
            EXPECT_EQ(verdict.state, VerdictState::suspect)
                << v.id() << " " << kind << ": " << verdict.detail;
            ++injected;
            caught += verdict.state == VerdictState::suspect ? 1 : 0;
        }
        for (const char* kind : {"one", "swap"}) {
            const Verdict verdict = run(v.id(), read_fault(v, kind, 64 * 1024), "3.1-codegen");
            EXPECT_EQ(verdict.state, VerdictState::suspect)
                << v.id() << " " << kind << " (64 KiB reads): " << verdict.detail;
            ++injected;
            caught += verdict.state == VerdictState::suspect ? 1 : 0;
        }
    }
    std::cout << "caught " << caught << " of " << injected << " faults at execution time\n";
    EXPECT_GE(injected, 60);
}

// A driver that differs by an ulp or two (contraction, reassociation): no
// false positive on any float path; int8 results have no such freedom.
TEST_F(CanaryFaults, ResultsAnUlpOrTwoAwayValidate) {
    int runs = 0;
    for (const kernels::Variant& v : default_set(device_)) {
        if (output_type(v) == "i8") {
            continue;
        }
        for (const char* kind : {"ulp+1", "ulp-2", "ulp~2"}) {
            // Reads of 64 bytes or more: batchnorm's statistics (5 f32 values)
            // are not of the variant's element type.
            const Verdict verdict = run(v.id(), read_fault(v, kind, 64), "3.1-contracted");
            EXPECT_EQ(verdict.state, VerdictState::validated)
                << v.id() << " " << kind << ": " << verdict.detail;
            ++runs;
        }
    }
    EXPECT_GE(runs, 27);
}

}  // namespace
}  // namespace kcache::canary
