// kcache kernel prelude: element types and activations selected by build options.
// Rendered in front of every kernel source, so it is part of the hashed text.
//
// Element type (exactly one): -DKC_F32, -DKC_F16 (IEEE half in memory, read and
// written with vload_half / vstore_half_rte: core OpenCL, no cl_khr_fp16), or
// -DKC_BF16 (bfloat16 bits in a ushort, round-to-nearest-even on store).
// Arithmetic is f32 in every case; ELEM is the type of an element in memory.
// Activation: -DKC_RELU=1 fuses max(v, 0) into the output, -DKC_RELU=0 does not.

#if defined(KC_F32) + defined(KC_F16) + defined(KC_BF16) > 1
#error "kcache: more than one element type selected"
#endif

#if defined(KC_F32)
#define ELEM float
#define LOAD(p, i) ((p)[(i)])
#define STORE(p, i, v) ((p)[(i)] = (v))
#elif defined(KC_F16)
#define ELEM half
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#elif defined(KC_BF16)
#define ELEM ushort
#define LOAD(p, i) kc_bf16_to_f32((p)[(i)])
#define STORE(p, i, v) ((p)[(i)] = kc_f32_to_bf16(v))
#endif

// bfloat16 is the upper half of an f32.
inline float kc_bf16_to_f32(ushort b) { return as_float((uint)b << 16); }

// f32 -> bfloat16 with round-to-nearest-even; a NaN stays a (quiet) NaN
// instead of rounding into an infinity.
inline ushort kc_f32_to_bf16(float f) {
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

#ifndef KC_RELU
#define KC_RELU 0
#endif

// The fused activation; a NaN becomes 0 under ReLU, as in the CPU reference.
inline float kc_activate(float v) {
#if KC_RELU
    return v > 0.0f ? v : 0.0f;
#else
    return v;
#endif
}
