// Il.*: kcache-jit building SPIR-V on a driver that accepts IL (label il: the
// SPIR-V PoCL of scripts/il-driver.sh, offered to the loader alone).

#include <gtest/gtest.h>

#include "il_support.hpp"
#include "jit_support.hpp"
#include "temp_dir.hpp"

namespace kcache::compiler {
namespace {

using namespace std::chrono_literals;

class Il : public test::TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        test::use_private_pocl_cache();
        ASSERT_NE(test::test_device_il_version().find("SPIR-V"), std::string::npos)
            << "the test device reports no SPIR-V: run scripts/il-driver.sh and point "
               "OCL_ICD_VENDORS at the directory it prints (ctest -L il does)";
    }
    JitCompiler jit() const { return test::pocl_jit(dir().string()); }
};

TEST_F(Il, SpirvBuildsIntoANativeBinaryThatRuns) {
    auto r = jit().compile(test::axpb_il_request(5), Clock::now() + 60s);
    ASSERT_TRUE(r.ok()) << r.error().message << "\n" << r.error().log;
    EXPECT_GT(r->timings.helper.build_us, 0u);
    // The binary is the driver's own (it loads back as a binary), not SPIR-V.
    EXPECT_NE(r->binary.compare(0, 4, "\x03\x02\x23\x07"), 0);
    // a = 1, b = 3: c = 1 * 2 + 3 + 5
    EXPECT_EQ(test::run_axpb_binary(r->binary, 256, 64, nullptr), 10.0f);
}

TEST_F(Il, TheIlIsBuiltNotTheSource) {
    // The source says salt 1; the IL was made from salt 9: the binary must
    // compute what the IL says.
    auto q = test::axpb_il_request(9);
    q.source = test::axpb_source(1);
    auto r = jit().compile(q, Clock::now() + 60s);
    ASSERT_TRUE(r.ok()) << r.error().message << "\n" << r.error().log;
    EXPECT_EQ(test::run_axpb_binary(r->binary, 64, 16, nullptr), 14.0f);
}

TEST_F(Il, AModuleNeedingAnExtensionTheDeviceLacksFailsWithTheDriversReason) {
    JitRequest q = test::axpb_request(0);
    q.source = test::half_fma_source();
    q.entry_points = {"hfma"};
    q.il = test::spirv_of(q.source, {"cl_khr_fp16"});
    auto pool = jit();
    auto r = pool.compile(q, Clock::now() + 60s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, JitErrc::build_error) << r.error().message;
    EXPECT_NE(r.error().message.find("clBuildProgram"), std::string::npos) << r.error().message;
    EXPECT_FALSE(r.error().log.empty()) << "the driver's build log names what did not link";
    // The same source compiled for the device's extensions (none of fp16) builds.
    q.il = test::spirv_of(q.source, {});
    auto again = pool.compile(q, Clock::now() + 60s);
    EXPECT_TRUE(again.ok()) << again.error().message << "\n" << again.error().log;
}

TEST_F(Il, ACorruptModuleIsAnErrorReplyNotACrash) {
    JitRequest q = test::axpb_il_request(2);
    // Keep the header, cut the instructions in half a word: still words, and
    // the magic number is right, so only the driver can refuse it.
    q.il.resize((q.il.size() / 2) & ~std::size_t{3});
    auto r = jit().compile(q, Clock::now() + 60s);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.error().kind == JitErrc::build_error || r.error().kind == JitErrc::driver_error)
        << to_string(r.error().kind) << ": " << r.error().message;
}

}  // namespace
}  // namespace kcache::compiler
