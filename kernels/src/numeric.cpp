// Host-side element conversions and tolerances.

#include "kcache/kernels/numeric.hpp"

#include <bit>
#include <cmath>
#include <cstring>

namespace kcache::kernels {
namespace {

// Shifts `mant` right by `shift` (1..31) rounding to nearest, ties to even.
std::uint32_t shift_round_even(std::uint32_t mant, std::uint32_t shift) {
    const std::uint32_t rem = mant & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1u);
    std::uint32_t out = mant >> shift;
    if (rem > halfway || (rem == halfway && (out & 1u) != 0))
        ++out;
    return out;
}

}  // namespace

std::string_view to_string(DType dtype) {
    switch (dtype) {
        case DType::f32:
            return "f32";
        case DType::f16:
            return "f16";
        case DType::bf16:
            return "bf16";
    }
    return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
    for (DType d : {DType::f32, DType::f16, DType::bf16}) {
        if (to_string(d) == name)
            return d;
    }
    return std::nullopt;
}

std::size_t element_size(DType dtype) {
    return dtype == DType::f32 ? 4 : 2;
}

std::uint16_t f32_to_f16(float f) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
    const std::uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return sign | 0x7e00u | ((ax >> 13) & 0x3ffu);  // NaN
    if (ax >= 0x38800000u) {  // normal in half (or overflowing): rebias 127 -> 15
        const std::uint32_t h = shift_round_even(ax - 0x38000000u, 13);
        return sign | static_cast<std::uint16_t>(h >= 0x7c00u ? 0x7c00u : h);
    }
    if (ax <= 0x33000000u)
        return sign;  // at or below half the smallest subnormal
    // Subnormal half: value * 2^24 rounded, with the implicit bit made explicit.
    const std::uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - (ax >> 23);
    return sign | static_cast<std::uint16_t>(shift_round_even(mant, shift));
}

float f16_to_f32(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    const std::uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f)
        return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
    if (exp != 0)
        return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
    const float magnitude = std::ldexp(static_cast<float>(mant), -24);  // subnormal or zero
    return sign != 0 ? -magnitude : magnitude;
}

std::uint16_t f32_to_bf16(float f) {
    std::uint32_t u = std::bit_cast<std::uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return static_cast<std::uint16_t>((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>(u >> 16);
}

float bf16_to_f32(std::uint16_t b) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

float round_to(DType dtype, float f) {
    switch (dtype) {
        case DType::f32:
            return f;
        case DType::f16:
            return f16_to_f32(f32_to_f16(f));
        case DType::bf16:
            return bf16_to_f32(f32_to_bf16(f));
    }
    return f;
}

std::vector<std::uint8_t> encode(DType dtype, std::span<const float> values) {
    std::vector<std::uint8_t> bytes(values.size() * element_size(dtype));
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (dtype == DType::f32) {
            std::memcpy(&bytes[i * 4], &values[i], 4);
            continue;
        }
        const std::uint16_t bits =
            dtype == DType::f16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
        std::memcpy(&bytes[i * 2], &bits, 2);
    }
    return bytes;
}

std::vector<float> decode(DType dtype, std::span<const std::uint8_t> bytes) {
    std::vector<float> values(bytes.size() / element_size(dtype));
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (dtype == DType::f32) {
            std::memcpy(&values[i], &bytes[i * 4], 4);
            continue;
        }
        std::uint16_t bits = 0;
        std::memcpy(&bits, &bytes[i * 2], 2);
        values[i] = dtype == DType::f16 ? f16_to_f32(bits) : bf16_to_f32(bits);
    }
    return values;
}

Tolerance tolerance(DType dtype) {
    // 4 ulps of the output type: the f32 result's own rounding and a
    // contracted or reassociated final step (1-2 ulps), its rounding to the
    // element type (half an ulp), and the rounding-boundary flip that an f32
    // difference of 1 ulp can cause after it. accum_rel 2^-16 allows 256
    // sequential f32 roundings of the whole magnitude: the longest sequential
    // run the kernels make is a few hundred terms, and random data lands far
    // inside it.
    constexpr double ulps = 4;
    constexpr double accum = 0x1p-16;
    switch (dtype) {
        case DType::f32:
            return {ulps, accum, 1e-30, 24};
        case DType::f16:
            return {ulps, accum, 0x1p-24, 11};
        case DType::bf16:
            return {ulps, accum, 1e-38, 8};
    }
    return {0, 0, 0};
}

double ulp_of(double v, int digits) {
    if (v == 0 || !std::isfinite(v)) {
        return 0;
    }
    int e = 0;
    std::frexp(v, &e);
    return std::ldexp(1.0, e - digits);
}

double allowed_error(const Tolerance& tol, const RefValue& ref) {
    return tol.ulps * ulp_of(ref.value, tol.digits) + tol.accum_rel * ref.scale + tol.abs;
}

bool within(const Tolerance& tol, double got, const RefValue& ref) {
    // The ulp of the larger binade of the two: a reference just below a power
    // of two rounds up into the next binade, where the steps are twice as long.
    RefValue at = ref;
    at.value = std::fabs(got) > std::fabs(ref.value) && std::isfinite(got) ? got : ref.value;
    const double allowed = allowed_error(tol, at);
    return std::fabs(got - ref.value) <= allowed;  // false for NaN
}

}  // namespace kcache::kernels
