// Host conversions (f16, bf16) and tolerance checks.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "kcache/kernels/numeric.hpp"
#include "random_floats.hpp"

namespace kcache::kernels {
namespace {

TEST(Kernels, F16RoundTripsEveryBitPattern) {
    for (std::uint32_t h = 0; h <= 0xffff; ++h) {
        const float f = f16_to_f32(static_cast<std::uint16_t>(h));
        if (std::isnan(f)) {
            EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f)))) << std::hex << h;
            continue;
        }
        EXPECT_EQ(f32_to_f16(f), h) << std::hex << h;
    }
}

// GCC's _Float16 conversion rounds to nearest even: compare on many floats.
TEST(Kernels, F16MatchesCompilerConversion) {
    for (const float f : test::random_floats(7, 200000, 100, 50)) {  // near half's range
        const auto want = std::bit_cast<std::uint16_t>(static_cast<_Float16>(f));
        ASSERT_EQ(f32_to_f16(f), want) << std::hexfloat << f;
    }
}

TEST(Kernels, F16EdgeCases) {
    EXPECT_EQ(f32_to_f16(65504.0f), 0x7bffu);
    EXPECT_EQ(f32_to_f16(65519.0f), 0x7bffu);  // below the midpoint to 2^16
    EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00u);  // the midpoint rounds (to even) to infinity
    EXPECT_EQ(f32_to_f16(-std::numeric_limits<float>::infinity()), 0xfc00u);
    EXPECT_EQ(f32_to_f16(0x1p-24f), 0x0001u);    // smallest subnormal
    EXPECT_EQ(f32_to_f16(0x1p-25f), 0x0000u);    // tie to even (zero)
    EXPECT_EQ(f32_to_f16(0x1.8p-24f), 0x0002u);  // tie to even (two)
    EXPECT_EQ(f32_to_f16(-0.0f), 0x8000u);
    EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(std::nanf("")))));
}

TEST(Kernels, Bf16RoundsToNearestEvenAndKeepsNaN) {
    EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80u);
    EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80u);  // tie, even stays
    EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82u);  // tie, odd rounds up
    EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f808001u)), 0x3f81u);
    EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x7f7fffffu)), 0x7f80u);  // overflow -> inf
    const std::uint16_t nan =
        f32_to_bf16(std::bit_cast<float>(0x7f800001u));  // payload in low bits
    EXPECT_TRUE(std::isnan(bf16_to_f32(nan))) << std::hex << nan;
    EXPECT_EQ(bf16_to_f32(0xc040u), -3.0f);
}

TEST(Kernels, EncodeDecodeRoundTrip) {
    const std::vector<float> values{0.0f, -1.5f, 3.25f, 1e-3f, 65504.0f};
    for (DType d : {DType::f32, DType::f16, DType::bf16}) {
        const auto bytes = encode(d, values);
        EXPECT_EQ(bytes.size(), values.size() * element_size(d));
        const auto back = decode(d, bytes);
        ASSERT_EQ(back.size(), values.size());
        for (std::size_t i = 0; i < values.size(); ++i)
            EXPECT_EQ(back[i], round_to(d, values[i]));
    }
}

TEST(Kernels, ToleranceIsInUlpsOfTheOutputType) {
    EXPECT_EQ(ulp_of(1.0, 24), 0x1p-23);
    EXPECT_EQ(ulp_of(0.75, 24), 0x1p-24);
    EXPECT_EQ(ulp_of(-1000.0, 11), 0.5);
    EXPECT_EQ(ulp_of(0.0, 8), 0.0);
    // 4 ulps pass, 5 do not, whatever the type and the magnitude.
    const RefValue one{1.0, 0.0};
    EXPECT_TRUE(within(tolerance(DType::f32), 1.0 + 4 * 0x1p-23, one));
    EXPECT_FALSE(within(tolerance(DType::f32), 1.0 + 5 * 0x1p-23, one));
    EXPECT_TRUE(within(tolerance(DType::f16), 1.0 - 4 * 0x1p-10, one));
    EXPECT_FALSE(within(tolerance(DType::f16), 1.0 + 5 * 0x1p-10, one));
    EXPECT_TRUE(within(tolerance(DType::bf16), 1.0 + 4 * 0x1p-7, one));
    EXPECT_FALSE(within(tolerance(DType::bf16), 1.0 + 5 * 0x1p-7, one));
    EXPECT_TRUE(within(tolerance(DType::f16), 1002.0, RefValue{1000.0, 0.0}));
    EXPECT_FALSE(within(tolerance(DType::f16), 1002.5, RefValue{1000.0, 0.0}));
    // The accumulation term: relative to the sum of magnitudes.
    const RefValue summed{1.0, 1.0};
    EXPECT_TRUE(within(tolerance(DType::f32), 1.0 + 0x1p-17, summed));
    EXPECT_FALSE(within(tolerance(DType::f32), 1.0 + 0x1p-15, summed));
    // Cancellation: a tiny result summed from large terms may be off by more.
    EXPECT_TRUE(within(tolerance(DType::f32), 1e-6, RefValue{0.0, 1.0}));
    EXPECT_FALSE(within(tolerance(DType::f32), std::nan(""), one));
    EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
    EXPECT_EQ(parse_dtype("f64"), std::nullopt);
}

}  // namespace
}  // namespace kcache::kernels
