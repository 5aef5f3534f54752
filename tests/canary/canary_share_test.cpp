// A canary helper runs a share of the set (one driver start for several
// variants), on PoCL under the test layer: each share is one kcache-verify;
// a variant that crashes or hangs its helper is blamed alone, within its
// own bound, and the variants after it in the share get their verdicts from
// a fresh helper.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "canary_support.hpp"
#include "kcache/canary/canary.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "temp_dir.hpp"

namespace kcache::canary {
namespace {

constexpr const char* kConv = "conv2d:dtype=f32,act=none,ls=64";
constexpr const char* kDot = "dot:dtype=f32,arith=f32,ls=256";
constexpr const char* kBn = "batchnorm:dtype=f32,act=none,ls=256";
constexpr const char* kQconv = "qconv_pointwise:out=f32,act=none,ls=64";

class CanaryShares : public test::FaultLayerTest {
  protected:
    void SetUp() override {
        test::FaultLayerTest::SetUp();
        device_ = test::test_device();
        // kcache-verify behind a script that counts its starts.
        helper_ = (dir() / "verify.sh").string();
        std::ofstream(helper_) << "#!/bin/sh\necho started >> '" << starts_file().string()
                               << "'\nexec '" << test::verify_helper() << "' \"$@\"\n";
        ::chmod(helper_.c_str(), 0755);
    }

    std::filesystem::path starts_file() const { return dir() / "starts"; }

    // How many helpers were started so far.
    int starts() const {
        std::ifstream in(starts_file());
        int n = 0;
        for (std::string line; std::getline(in, line);) {
            ++n;
        }
        return n;
    }

    // The canary of conv2d, dot, batchnorm and qconv in `parallel` helpers,
    // each variant bound by `timeout`, under the faults of `env`.
    Record run(unsigned parallel, const std::vector<std::string>& env,
               std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
        std::vector<std::string> settings = env;
        settings.push_back("KCACHE_FAULT_DRIVER=3.1-shares");
        test::ScopedEnv scoped(settings);
        device_db::DeviceIdentity d = device_;
        d.driver_version = "3.1-shares";
        std::vector<kernels::Variant> set;
        for (const char* id : {kConv, kDot, kBn, kQconv}) {
            set.push_back(*kernels::parse_variant(id));
        }
        RunOptions o{helper_, 4321, timeout, parallel};
        return run_canary(d, set, o);
    }

    device_db::DeviceIdentity device_;
    std::string helper_;
};

TEST_F(CanaryShares, EachHelperRunsItsShareOfTheSet) {
    const Record r = run(2, {});
    ASSERT_EQ(r.verdicts.size(), 4u);
    for (const Verdict& v : r.verdicts) {
        EXPECT_EQ(v.state, VerdictState::validated) << v.variant << ": " << v.detail;
    }
    EXPECT_EQ(r.verdicts[0].variant, kConv);
    EXPECT_EQ(r.verdicts[3].variant, kQconv);
    EXPECT_EQ(starts(), 2);  // four variants, two helpers
}

TEST_F(CanaryShares, ACrashBlamesItsVariantAndTheRestOfTheShareRunInAFreshHelper) {
    const Record r = run(1, {"KCACHE_FAULT_CRASH=dot_finish"});
    ASSERT_EQ(r.verdicts.size(), 4u);
    EXPECT_EQ(r.verdicts[0].state, VerdictState::validated) << r.verdicts[0].detail;
    EXPECT_EQ(r.verdicts[1].state, VerdictState::suspect) << r.verdicts[1].detail;
    EXPECT_EQ(r.verdicts[1].check, "crashed") << r.verdicts[1].detail;
    EXPECT_EQ(r.verdicts[2].state, VerdictState::validated) << r.verdicts[2].detail;
    EXPECT_EQ(r.verdicts[3].state, VerdictState::validated) << r.verdicts[3].detail;
    EXPECT_EQ(starts(), 2);  // the share, then what came after the crash
}

TEST_F(CanaryShares, AHangBlamesItsVariantWithinItsOwnBoundAndTheRestStillRun) {
    const auto start = std::chrono::steady_clock::now();
    const Record r = run(1, {"KCACHE_FAULT_HANG=batchnorm_inference"}, std::chrono::seconds(10));
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_EQ(r.verdicts.size(), 4u);
    EXPECT_EQ(r.verdicts[0].state, VerdictState::validated) << r.verdicts[0].detail;
    EXPECT_EQ(r.verdicts[1].state, VerdictState::validated) << r.verdicts[1].detail;
    EXPECT_EQ(r.verdicts[2].state, VerdictState::suspect) << r.verdicts[2].detail;
    EXPECT_EQ(r.verdicts[2].check, "timeout") << r.verdicts[2].detail;
    EXPECT_EQ(r.verdicts[3].state, VerdictState::validated) << r.verdicts[3].detail;
    EXPECT_EQ(starts(), 2);
    // The hang costs its own bound (10 s), not one for the share (40 s): each
    // variant that answered moved the deadline on.
    EXPECT_LT(took, std::chrono::seconds(20));
}

TEST_F(CanaryShares, EarlierBinariesThatAreNotFramesAreAUsageError) {
    for (const std::string& in : {std::string("8.0\n12\nshort"), std::string("8.0\nx\n"),
                                  std::string("\n3\nabc\n0\n"), std::string("\n0\n\n0\nextra")}) {
        compiler::SpawnSpec spec;
        spec.program = test::verify_helper();
        spec.args = {"--canary",   std::string(kConv) + ";" + kDot,
                     "--seed",     "1",
                     "--device",   device_.name,
                     "--platform", device_.platform_name,
                     "--driver",   device_.driver_version,
                     "--previous", "stdin"};
        spec.stdin_data = in;
        const auto r = compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(60));
        EXPECT_EQ(r.exit_code, 64) << in << ": " << r.out << r.err;
        EXPECT_NE(r.err.find("--previous stdin: "), std::string::npos) << r.err;
        EXPECT_EQ(r.out, "") << in;
    }
}

}  // namespace
}  // namespace kcache::canary
