#pragma once
// Element types, host-side f16/bf16 conversions (round-to-nearest-even, the
// same rounding the kernels use) and the tolerances the CPU references are
// checked with. Shared by the references, the tests and operator libraries.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::kernels {

// Element type of a float kernel's tensors; accumulation is always f32.
enum class DType { f32, f16, bf16 };

// Returns "f32", "f16" or "bf16" (the registry's "dtype" values).
std::string_view to_string(DType dtype);
// Returns the element type named `name`, or nullopt for any other text.
std::optional<DType> parse_dtype(std::string_view name);
// Returns the size in bytes of one element of `dtype` in device memory.
std::size_t element_size(DType dtype);

// IEEE binary16 bits nearest to `f` (ties to even; overflow to infinity;
// a NaN stays a quiet NaN with the sign kept).
std::uint16_t f32_to_f16(float f);
// The value of binary16 bits `h` (exact).
float f16_to_f32(std::uint16_t h);
// bfloat16 bits nearest to `f` (ties to even; a NaN stays a quiet NaN).
std::uint16_t f32_to_bf16(float f);
// The value of bfloat16 bits `b` (exact).
float bf16_to_f32(std::uint16_t b);
// Returns `f` rounded to the nearest value representable in `dtype`.
float round_to(DType dtype, float f);

// Returns `values` in `dtype`'s device layout (little-endian f32, f16 or bf16 bits).
std::vector<std::uint8_t> encode(DType dtype, std::span<const float> values);
// Returns the values held in `bytes` of `dtype`'s device layout (a trailing partial element is
// ignored).
std::vector<float> decode(DType dtype, std::span<const std::uint8_t> bytes);

// A reference result: the exact-ish value (computed in double) and the sum of
// the magnitudes of the terms it was summed from, which bounds the rounding
// error an f32 accumulation can make whatever the cancellation.
struct RefValue {
    double value = 0;
    double scale = 0;
};

// How far a device result may be from the reference:
//   |got - ref.value| <= ulps * ulp(ref.value) + accum_rel * ref.scale + abs
// where ulp(v) is the spacing of the output type at |v| (2^(e - digits) for
// |v| = m * 2^e, m in [0.5, 1)).
struct Tolerance {
    double ulps;       // rounding and contraction of the result, in the output type's ulps
    double accum_rel;  // f32 accumulation error, relative to the sum of magnitudes
    double abs;        // floor near zero (subnormal step of the element type)
    int digits = 24;   // significand bits of the output type: f32 24, f16 11, bf16 8
};

// The spacing of a type with `digits` significand bits at |v| (0 for 0).
double ulp_of(double v, int digits);

// The error `tol` allows against `ref`.
double allowed_error(const Tolerance& tol, const RefValue& ref);

// Returns the documented tolerance for results stored as `dtype` (see kernels/README.md).
Tolerance tolerance(DType dtype);

// Returns true when `got` is within `tol` of `ref` (a NaN is never within).
bool within(const Tolerance& tol, double got, const RefValue& ref);

}  // namespace kcache::kernels

#pragma GCC visibility pop
