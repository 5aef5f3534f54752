// qconv_pointwise (alias qconv2d_pointwise): quantized 1x1 convolution, NCHW.
//
//   x          [N][C][HW]  int8 activations, zero point x_zero_point
//   w          [K][C]      int8 weights (symmetric)
//   bias       [K]         int32, read only when has_bias != 0
//   scale      [K]         f32 per output channel (input scale * weight scale,
//                          divided by the output scale for the int8 output)
//   zero_point [K]         int32 per output channel: the int8 output's zero point
//   y          [N][K][HW]  -DKC_QOUT_I8: int8, -DKC_QOUT_F32: f32
//   shape = (N, C, K, HW)
// acc = bias[k] + sum_c (x - x_zero_point) * w  in int32, then
//   f32: y = (float)acc * scale[k]                            (ReLU: max(y, 0))
//   i8:  y = sat8(rint((float)acc * scale[k]) + zero_point[k]) (ReLU: y >= zero_point[k])
// One item per output element, p fastest; global = N*K*HW rounded up to KC_LOCAL_SIZE.

#ifndef KC_LOCAL_SIZE
#error "kcache: qconv_pointwise needs -DKC_LOCAL_SIZE"
#endif

#if defined(KC_QOUT_I8)
#define QOUT char
#elif defined(KC_QOUT_F32)
#define QOUT float
#else
#error "kcache: qconv_pointwise needs -DKC_QOUT_I8 or -DKC_QOUT_F32"
#endif

__kernel __attribute__((reqd_work_group_size(KC_LOCAL_SIZE, 1, 1))) void qconv_pointwise(
    __global const char* x, __global const char* w, __global const int* bias,
    __global const float* scale, __global const int* zero_point, __global QOUT* y, int4 shape,
    int x_zero_point, int has_bias) {
    const int C = shape.s1, K = shape.s2;
    const size_t pixels = (size_t)shape.s3;
    const size_t idx = get_global_id(0);
    if (idx >= (size_t)shape.s0 * K * pixels) return;

    const size_t p = idx % pixels;
    const int k = (int)((idx / pixels) % K);
    const int n = (int)(idx / (pixels * K));
    int acc = has_bias ? bias[k] : 0;
    for (int c = 0; c < C; ++c) {
        acc += ((int)x[((size_t)n * C + c) * pixels + p] - x_zero_point) * (int)w[(size_t)k * C + c];
    }
    const float real = (float)acc * scale[k];
#if defined(KC_QOUT_F32)
    y[idx] = KC_RELU ? fmax(real, 0.0f) : real;
#else
    long q = (long)convert_int_sat_rte(real) + zero_point[k];
    if (KC_RELU) q = max(q, (long)zero_point[k]);
    y[idx] = (char)clamp(q, -128L, 127L);
#endif
}
