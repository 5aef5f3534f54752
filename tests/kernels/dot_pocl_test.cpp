// Known-answer tests for dot on PoCL: every dtype, lengths 0 to 2^24, batches.

#include <cmath>

#include "cl_harness.hpp"
#include "kcache/cl/launch.hpp"
#include "kcache/kernels/reference.hpp"

namespace kcache::test {
namespace {

using kernels::DType;

std::string dot_id(DType dtype, std::size_t ls) {
    return "dot:dtype=" + std::string(kernels::to_string(dtype)) + ",ls=" + std::to_string(ls);
}

// Runs both passes of dot on `batch` rows of length `n` and returns the results.
std::vector<float> run_dot(DType dtype, std::size_t ls, const std::vector<float>& x,
                           const std::vector<float>& y, std::size_t n, std::size_t batch) {
    auto run = KernelsCl::device_run(dot_id(dtype, ls));
    cl::DotBuffers b;
    b.x = run->upload(kernels::encode(dtype, x));
    b.y = run->upload(kernels::encode(dtype, y));
    b.partial = run->scratch(cl::dot_partial_bytes(n, batch, ls));
    b.out = run->scratch(batch * kernels::element_size(dtype));
    run->launch([&](const cl::LaunchTarget& t) { return cl::launch_dot(t, n, batch, b); });
    const auto out = run->read(b.out, batch * kernels::element_size(dtype));
    EXPECT_TRUE(run->ok()) << run->error();
    return kernels::decode(dtype, out);
}

void check_dot(DType dtype, std::size_t ls, std::size_t n, std::size_t batch, std::uint32_t seed) {
    const auto x = random_values(dtype, n * batch, seed);
    const auto y = random_values(dtype, n * batch, seed + 1);
    const auto got = run_dot(dtype, ls, x, y, n, batch);
    expect_close(dtype, got, kernels::dot_reference(x, y, n, batch),
                 "dot n=" + std::to_string(n) + " batch=" + std::to_string(batch) +
                     " ls=" + std::to_string(ls));
}

// Lengths around every boundary: empty, one, odd, a group, several groups, the group cap.
constexpr std::size_t kLengths[] = {0, 1, 2, 3, 7, 63, 255, 256, 257, 1000, 4097, 65537, 300001};

void check_lengths(DType dtype) {
    std::uint32_t seed = 1;
    for (std::size_t n : kLengths)
        check_dot(dtype, 256, n, 1, seed += 2);
    for (std::size_t n : {0, 1, 5, 129, 3000})
        check_dot(dtype, 256, n, 7, seed += 2);
    for (std::size_t n : {1, 33, 70000})
        check_dot(dtype, 64, n, 3, seed += 2);
}

class Dot : public KernelsClByDType {};

TEST_P(Dot, Lengths) {
    check_lengths(GetParam());
}
INSTANTIATE_TEST_SUITE_P(KernelsCl, Dot, ::testing::ValuesIn(kAllDTypes), dtype_name);

TEST_F(KernelsCl, DotF32Length2Pow24) {
    check_dot(DType::f32, 256, std::size_t{1} << 24, 1, 99);
}
TEST_F(KernelsCl, DotF16Length2Pow24) {
    check_dot(DType::f16, 256, std::size_t{1} << 24, 1, 98);
}

// Exact small-integer data: any lost or doubled partial shows as a wrong integer.
TEST_F(KernelsCl, DotCountsEveryElementOnce) {
    for (DType dtype : kAllDTypes) {
        const std::size_t n = 60001;  // below the f16 maximum
        std::vector<float> x(n, 1.0f), y(n, 1.0f);
        const auto got = run_dot(dtype, 256, x, y, n, 1);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0], kernels::round_to(dtype, static_cast<float>(n)))
            << kernels::to_string(dtype);
    }
}

// The native-half variant needs cl_khr_fp16, which this PoCL lacks: refused up front.
TEST_F(KernelsCl, DotNativeHalfIsUnsupportedHere) {
    auto variant = kernels::parse_variant("dot:dtype=f16,arith=f16");
    ASSERT_TRUE(variant.ok());
    auto support = kernels::check_support(*variant, device().extensions);
    ASSERT_FALSE(support.ok());
    EXPECT_EQ(support.error().code, kernels::KernelErrc::unsupported);
    EXPECT_NE(support.error().message.find("cl_khr_fp16"), std::string::npos);
}

}  // namespace
}  // namespace kcache::test
