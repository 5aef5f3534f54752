// CompilerJit.*: kcache-jit against the real PoCL driver.

#include <gtest/gtest.h>

#include <cmath>

#include "il_support.hpp"
#include "jit_support.hpp"
#include "temp_dir.hpp"

namespace kcache::compiler {
namespace {

using namespace std::chrono_literals;

class CompilerJit : public test::TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        test::use_private_pocl_cache();
    }
    JitCompiler jit() const { return test::pocl_jit(dir().string()); }
};

TEST_F(CompilerJit, JitBuildsAValidatedBinaryThatRuns) {
    auto r = jit().compile(test::axpb_request(7), Clock::now() + 60s);
    ASSERT_TRUE(r.ok()) << r.error().message << "\n" << r.error().log;
    EXPECT_FALSE(r->binary.empty());
    EXPECT_FALSE(r->warmed);
    EXPECT_GT(r->timings.helper.build_us, 0u);
    EXPECT_GT(r->timings.wall.count(), 0);
    // a = 1, b = 3: c = 1 * 2 + 3 + 7
    EXPECT_EQ(test::run_axpb_binary(r->binary, 256, 64, nullptr), 12.0f);
}

TEST_F(CompilerJit, WarmedBinaryRunsCorrectly) {
    auto q = test::axpb_request(11);
    q.warmup = WarmupLaunch{1, {256, 1, 1}, {64, 1, 1}, 4096};
    auto r = jit().compile(q, Clock::now() + 60s);
    ASSERT_TRUE(r.ok()) << r.error().message << "\n" << r.error().log;
    EXPECT_TRUE(r->warmed) << r->warmup_note;
    EXPECT_GT(r->timings.helper.warmup_us, 0u);
    EXPECT_EQ(test::run_axpb_binary(r->binary, 256, 64, nullptr), 16.0f);
}

TEST_F(CompilerJit, WarmupOfAllKernelsWithScalarAndLocalArguments) {
    auto q = test::axpb_request(0);
    q.source = R"(__kernel void k1(__global float* a, int n, float4 v, __local float* tmp) {
        size_t i = get_global_id(0);
        tmp[get_local_id(0)] = v.x;
        if (i < n) { a[i] = tmp[get_local_id(0)]; }
    }
    __kernel void k2(__constant uint* c, __global ulong* o) { o[get_global_id(0)] = c[0]; })";
    q.entry_points.clear();
    q.warmup = WarmupLaunch{1, {64, 1, 1}, {16, 1, 1}, 1024};
    auto r = jit().compile(q, Clock::now() + 60s);
    ASSERT_TRUE(r.ok()) << r.error().message << "\n" << r.error().log;
    EXPECT_TRUE(r->warmed) << r->warmup_note;
}

TEST_F(CompilerJit, BuildErrorComesBackWithTheCompilerLog) {
    auto q = test::axpb_request(0);
    q.source = "__kernel void broken(__global float* a) { a[0] = undeclared_name; }\n";
    q.entry_points = {"broken"};
    auto r = jit().compile(q, Clock::now() + 60s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::build_error) << r.error().message;
    EXPECT_NE(r.error().log.find("undeclared_name"), std::string::npos) << r.error().log;
}

TEST_F(CompilerJit, MissingEntryPointIsABuildError) {
    auto q = test::axpb_request(0);
    q.entry_points = {"not_there"};
    auto r = jit().compile(q, Clock::now() + 60s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::build_error);
    EXPECT_NE(r.error().message.find("not_there"), std::string::npos);
}

TEST_F(CompilerJit, IdentityMatchingNoDeviceIsDeviceNotFound) {
    auto q = test::axpb_request(0);
    q.device.driver_version = "0.0-no-such-driver";
    auto r = jit().compile(q, Clock::now() + 60s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::device_not_found);
    // The message lists what was seen, so a mismatch can be explained.
    EXPECT_NE(r.error().message.find("Portable Computing Language"), std::string::npos)
        << r.error().message;
}

TEST_F(CompilerJit, UuidSelectsNothingWhenTheDeviceHasNoSuchUuid) {
    auto q = test::axpb_request(0);
    q.device.uuid_hex = std::string(32, 'f');
    auto r = jit().compile(q, Clock::now() + 60s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::device_not_found);
}

TEST_F(CompilerJit, AddressSpaceCapIsAppliedToTheHelper) {
    auto q = test::axpb_request(3);
    q.address_space_cap = 4ull << 30;
    auto roomy = jit().compile(q, Clock::now() + 60s);
    EXPECT_TRUE(roomy.ok()) << roomy.error().message;
    // 256 MiB cannot hold PoCL and LLVM: a typed failure, not a hang or a
    // success.
    q.address_space_cap = 256ull << 20;
    auto cramped = jit().compile(q, Clock::now() + 60s);
    ASSERT_FALSE(cramped.ok());
    EXPECT_NE(cramped.error().kind, JitErrc::timeout) << cramped.error().message;
}

TEST_F(CompilerJit, SpirvOnADriverWithoutIlIsARefusalWithTheReasonNotACrash) {
    // Debian's PoCL is built without SPIR-V: it reports no IL version, and
    // the helper answers with the driver's refusal and keeps serving.
    ASSERT_EQ(test::test_device_il_version(), "") << "this test is about a driver without IL";
    auto pool = jit();
    auto r = pool.compile(test::axpb_il_request(4), Clock::now() + 60s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::driver_error) << r.error().message;
    EXPECT_NE(r.error().message.find("clCreateProgramWithIL"), std::string::npos)
        << r.error().message;
    auto source = pool.compile(test::axpb_request(4), Clock::now() + 60s);
    EXPECT_TRUE(source.ok()) << source.error().message;
}

}  // namespace
}  // namespace kcache::compiler
