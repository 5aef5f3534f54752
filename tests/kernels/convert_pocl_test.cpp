// The prelude's device-side element conversions agree bit for bit with the
// host helpers the references use: f16 through vload_half / vstore_half_rte
// (core OpenCL, PoCL has no cl_khr_fp16) and bf16 through the ushort helpers.

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "cl_harness.hpp"
#include "random_floats.hpp"

namespace kcache::test {
namespace {

using kernels::DType;

const char* kConvertSource = R"(
__kernel void narrow(__global const float* in, __global ELEM* out) {
    STORE(out, get_global_id(0), in[get_global_id(0)]);
}
__kernel void widen(__global const ELEM* in, __global float* out) {
    out[get_global_id(0)] = LOAD(in, get_global_id(0));
}
)";

// Kernel `entry` of the conversion program for `dtype`; null (and a test failure) on error.
cl::KernelHandle convert_kernel(DType dtype, const char* entry) {
    const std::string prelude(*kernels::embedded_source("prelude.cl"));
    cl::ProgramHandle prog =
        KernelsCl::build(prelude + kConvertSource, std::string("-cl-std=CL1.2 -DKC_") +
                                                       (dtype == DType::f16 ? "F16" : "BF16"));
    if (!prog)
        return nullptr;
    cl_int err = CL_SUCCESS;
    cl::KernelHandle k(clCreateKernel(prog.get(), entry, &err));
    EXPECT_EQ(err, CL_SUCCESS) << entry;
    return k;
}

// Floats that probe rounding: specials, ties, subnormals, overflow, random bits.
std::vector<float> probe_floats() {
    constexpr float inf = std::numeric_limits<float>::infinity();
    std::vector<float> v{0.0f,       -0.0f,    1.0f,         -1.0f,  inf,      -inf,
                         65504.0f,   65519.0f, 65520.0f,     1e9f,   0x1p-24f, 0x1p-25f,
                         0x1.8p-24f, 0x1p-14f, 0x1.ffcp-15f, 1e-30f, 3.4e38f,  -2.5f};
    for (std::uint32_t bits : {0x3f808000u, 0x3f818000u, 0x3f808001u, 0x3f800fffu, 0x3f801000u,
                               0x3f803000u, 0x7f7fffffu, 0x00000001u, 0x807fffffu}) {
        v.push_back(std::bit_cast<float>(bits));
    }
    const auto random = random_floats(5, 20000, 95, 60);  // exponents around half's range
    v.insert(v.end(), random.begin(), random.end());
    return v;
}

void check_narrow(DType dtype) {
    cl::KernelHandle k = convert_kernel(dtype, "narrow");
    ASSERT_TRUE(k);
    std::vector<float> in = probe_floats();
    in.push_back(std::nanf(""));
    in.push_back(std::bit_cast<float>(0x7f800001u));  // signalling NaN, payload in low bits
    cl::MemHandle ib = KernelsCl::buffer(kernels::encode(DType::f32, in));
    cl::MemHandle ob = KernelsCl::buffer(in.size() * 2);
    set_args(k.get(), ib.get(), ob.get());
    KernelsCl::run(k.get(), {in.size()}, {1});
    const auto out = KernelsCl::read(ob.get(), in.size() * 2);
    for (std::size_t i = 0; i < in.size(); ++i) {
        std::uint16_t got = 0;
        std::memcpy(&got, &out[i * 2], 2);
        const std::uint16_t want =
            dtype == DType::f16 ? kernels::f32_to_f16(in[i]) : kernels::f32_to_bf16(in[i]);
        if (std::isnan(in[i])) {
            EXPECT_TRUE(std::isnan(kernels::decode(dtype, {&out[i * 2], 2})[0])) << std::hex << got;
        } else {
            ASSERT_EQ(got, want) << kernels::to_string(dtype) << " " << std::hexfloat << in[i];
        }
    }
}

void check_widen_all_patterns(DType dtype) {
    cl::KernelHandle k = convert_kernel(dtype, "widen");
    ASSERT_TRUE(k);
    std::vector<std::uint8_t> in(65536 * 2);
    for (std::uint32_t h = 0; h < 65536; ++h) {
        const auto bits = static_cast<std::uint16_t>(h);
        std::memcpy(&in[h * 2], &bits, 2);
    }
    cl::MemHandle ib = KernelsCl::buffer(in);
    cl::MemHandle ob = KernelsCl::buffer(65536 * 4);
    set_args(k.get(), ib.get(), ob.get());
    KernelsCl::run(k.get(), {65536}, {64});
    const auto got = kernels::decode(DType::f32, KernelsCl::read(ob.get(), 65536 * 4));
    const auto want = kernels::decode(dtype, in);
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i])) {
            EXPECT_TRUE(std::isnan(got[i])) << std::hex << i;
        } else {
            ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want[i]))
                << kernels::to_string(dtype) << " bits " << std::hex << i;
        }
    }
}

// The conversions of the two 16-bit element types (f32 needs none).
class Convert : public KernelsClByDType {};

TEST_P(Convert, StoreMatchesHostRounding) {
    check_narrow(GetParam());
}
TEST_P(Convert, LoadMatchesHostForEveryPattern) {
    check_widen_all_patterns(GetParam());
}
INSTANTIATE_TEST_SUITE_P(KernelsCl, Convert, ::testing::Values(DType::f16, DType::bf16),
                         dtype_name);

}  // namespace
}  // namespace kcache::test
