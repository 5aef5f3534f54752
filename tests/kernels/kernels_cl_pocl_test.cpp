// kernels_cl on PoCL: the known-answer tests pass on programs built from the
// registry's source and fail on the wrong program; launchers and the binary
// loader name the failing OpenCL call and error.

#include <cstring>

#include "cl_harness.hpp"
#include "kcache/cl/kat.hpp"
#include "kcache/cl/launch.hpp"
#include "kcache/cl/program.hpp"

namespace kcache::test {
namespace {

kernels::Variant variant(const std::string& id) {
    auto v = kernels::parse_variant(id);
    EXPECT_TRUE(v.ok()) << id;
    return v.ok() ? *v : kernels::Variant{};
}

// Returns the binary of `program` (one device).
std::vector<std::uint8_t> binary_of(cl_program program) {
    std::size_t size = 0;
    EXPECT_EQ(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr),
              CL_SUCCESS);
    std::vector<std::uint8_t> bytes(size);
    unsigned char* data = bytes.data();
    EXPECT_EQ(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr),
              CL_SUCCESS);
    return bytes;
}

TEST_F(KernelsCl, KatPassesOnEachKernelBuiltFromTheRegistrySource) {
    for (const std::string id :
         {"dot:dtype=f16,ls=64", "conv2d:dtype=bf16,act=relu", "qconv_pointwise:out=i8,act=relu",
          "batchnorm:dtype=f32", "qconv2d_pointwise:out=f32"}) {
        const kernels::Variant v = variant(id);
        ASSERT_TRUE(cl::has_kat(v.kernel)) << id;
        const cl::KatResult r =
            cl::run_kat(device().context.get(), device().device, KernelsCl::program(id), v);
        EXPECT_EQ(r.state, cl::KatState::passed) << id << ": " << r.detail;
        EXPECT_NE(r.detail.find("max error"), std::string::npos) << r.detail;
    }
}

TEST_F(KernelsCl, KatFailsOnTheProgramOfAnotherKernelNamingTheCall) {
    const cl::KatResult r = cl::run_kat(device().context.get(), device().device,
                                        KernelsCl::program("dot:dtype=f32"), variant("conv2d"));
    EXPECT_EQ(r.state, cl::KatState::failed);
    EXPECT_NE(r.detail.find("clCreateKernel(conv2d_direct): CL_INVALID_KERNEL_NAME (-46)"),
              std::string::npos)
        << r.detail;
}

TEST_F(KernelsCl, KatOfAKernelWithoutOneIsNoKat) {
    kernels::Variant v;
    v.kernel = "not_a_kernel";
    EXPECT_FALSE(cl::has_kat(v.kernel));
    const cl::KatResult r = cl::run_kat(device().context.get(), device().device,
                                        KernelsCl::program("dot:dtype=f32"), v);
    EXPECT_EQ(r.state, cl::KatState::no_kat);
}

TEST_F(KernelsCl, LaunchersReportTheFailingCallAndItsErrorName) {
    cl::LaunchTarget t{device().queue.get(), KernelsCl::program("conv2d:dtype=f32"), 256, {}};
    auto run = KernelsCl::device_run("dot:dtype=f32");
    cl::DotBuffers b{run->scratch(64), run->scratch(64), run->scratch(64), run->scratch(64)};
    auto launched = cl::launch_dot(t, 10, 1, b);
    ASSERT_FALSE(launched.ok());
    EXPECT_EQ(launched.error().code, CL_INVALID_KERNEL_NAME);
    EXPECT_EQ(launched.error().message,
              "clCreateKernel(dot_partial): CL_INVALID_KERNEL_NAME (-46)");

    kernels::Conv2dShape bad;
    bad.groups = 0;
    auto invalid = cl::launch_conv2d(t, bad, {});
    ASSERT_FALSE(invalid.ok());
    EXPECT_EQ(invalid.error().code, CL_INVALID_VALUE);
    EXPECT_EQ(invalid.error().message, "launch_conv2d: shape out of range: CL_INVALID_VALUE");

    t.local_size = 0;  // e.g. a variant_local_size error ignored
    auto no_local = cl::launch_batchnorm_inference(t, {1, 1, 1}, {});
    ASSERT_FALSE(no_local.ok());
    EXPECT_EQ(no_local.error().code, CL_INVALID_WORK_GROUP_SIZE);
}

// Nothing to compute (no rows, no channels): a marker event that completes.
TEST_F(KernelsCl, LaunchersWithNothingToDoReturnACompletedMarker) {
    auto run = KernelsCl::device_run("dot:dtype=f32");
    cl::DotBuffers b{run->scratch(4), run->scratch(4), run->scratch(4), run->scratch(4)};
    auto launched = cl::launch_dot(run->target(), 5, 0, b);
    ASSERT_TRUE(launched.ok()) << launched.error().message;
    cl_event e = launched->get();
    EXPECT_EQ(clWaitForEvents(1, &e), CL_SUCCESS);

    auto bn = KernelsCl::device_run("batchnorm:dtype=f32");
    auto stats = cl::launch_batchnorm_stats(bn->target(), {2, 0, 3}, {});
    ASSERT_TRUE(stats.ok()) << stats.error().message;
    e = stats->get();
    EXPECT_EQ(clWaitForEvents(1, &e), CL_SUCCESS);
}

TEST_F(KernelsCl, ProgramFromBinaryLoadsARealBinaryAndNamesWhyItRejectsOthers) {
    const std::string id = "dot:dtype=f32";
    const auto bytes = binary_of(KernelsCl::program(id));
    ASSERT_FALSE(bytes.empty());
    auto rendered = kernels::render(variant(id));
    ASSERT_TRUE(rendered.ok());
    auto loaded =
        cl::program_from_binary(device().context.get(), device().device, bytes, rendered->options);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    EXPECT_EQ(
        cl::run_kat(device().context.get(), device().device, loaded->get(), variant(id)).state,
        cl::KatState::passed);

    auto empty = cl::program_from_binary(device().context.get(), device().device, {}, "");
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.error().message, "empty binary");
    EXPECT_EQ(empty.error().code, CL_INVALID_VALUE);
    EXPECT_FALSE(empty.error().at_build);
    const std::vector<std::uint8_t> garbage(bytes.size() / 2, 0x5a);
    auto rejected = cl::program_from_binary(device().context.get(), device().device, garbage, "");
    ASSERT_FALSE(rejected.ok());
    EXPECT_NE(rejected.error().message.find("CL_"), std::string::npos) << rejected.error().message;
    EXPECT_NE(rejected.error().code, CL_SUCCESS);
    EXPECT_FALSE(rejected.error().at_build);
}

}  // namespace
}  // namespace kcache::test
