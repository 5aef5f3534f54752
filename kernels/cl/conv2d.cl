// conv2d: NCHW direct convolution, f32 accumulation, optional bias, fused activation.
//
// Arguments of both entry points:
//   x    [N][C][H][W]           input
//   w    [K][C/groups][R][S]    filters
//   bias [K]                    read only when has_bias != 0 (may then be any buffer)
//   y    [N][K][OH][OW]         output
//   in      = (N, C, H, W)
//   filter  = (K, R, S, groups)
//   step    = (stride_h, stride_w, pad_h, pad_w)      padding on both sides
//   dil_out = (dilation_h, dilation_w, OH, OW)
// conv2d_direct: any shape; one item per output element, global = N*K*OH*OW
//   rounded up to KC_LOCAL_SIZE (extra items return).
// conv2d_pointwise: the 1x1 fast path, only for R = S = 1, stride 1, no padding,
//   groups 1; one item per (n, block of KC_PW_BLOCK output channels, pixel),
//   global = N * ceil(K / KC_PW_BLOCK) * OH * OW rounded up; each input value is
//   loaded once per block of channels.

#ifndef KC_LOCAL_SIZE
#error "kcache: conv2d needs -DKC_LOCAL_SIZE"
#endif
#define KC_PW_BLOCK 4

__kernel __attribute__((reqd_work_group_size(KC_LOCAL_SIZE, 1, 1))) void conv2d_direct(
    __global const ELEM* x, __global const ELEM* w, __global const ELEM* bias, __global ELEM* y,
    int4 in, int4 filter, int4 step, int4 dil_out, int has_bias) {
    const int C = in.s1, H = in.s2, W = in.s3;
    const int K = filter.s0, R = filter.s1, S = filter.s2, groups = filter.s3;
    const int OH = dil_out.s2, OW = dil_out.s3;
    const size_t total = (size_t)in.s0 * K * OH * OW;
    const size_t idx = get_global_id(0);
    if (idx >= total) return;

    const int ow = (int)(idx % OW);
    const int oh = (int)((idx / OW) % OH);
    const int k = (int)((idx / ((size_t)OW * OH)) % K);
    const int n = (int)(idx / ((size_t)OW * OH * K));
    const int cpg = C / groups;           // input channels per group
    const int c0 = (k / (K / groups)) * cpg;  // first input channel of k's group

    float acc = has_bias ? LOAD(bias, k) : 0.0f;
    for (int c = 0; c < cpg; ++c) {
        const size_t x_plane = ((size_t)n * C + c0 + c) * H * W;
        const size_t w_plane = ((size_t)k * cpg + c) * R * S;
        for (int r = 0; r < R; ++r) {
            const int ih = oh * step.s0 - step.s2 + r * dil_out.s0;
            if (ih < 0 || ih >= H) continue;
            for (int s = 0; s < S; ++s) {
                const int iw = ow * step.s1 - step.s3 + s * dil_out.s1;
                if (iw < 0 || iw >= W) continue;
                acc += LOAD(x, x_plane + (size_t)ih * W + iw) * LOAD(w, w_plane + r * S + s);
            }
        }
    }
    STORE(y, idx, kc_activate(acc));
}

__kernel __attribute__((reqd_work_group_size(KC_LOCAL_SIZE, 1, 1))) void conv2d_pointwise(
    __global const ELEM* x, __global const ELEM* w, __global const ELEM* bias, __global ELEM* y,
    int4 in, int4 filter, int4 step, int4 dil_out, int has_bias) {
    (void)step;
    const int C = in.s1, K = filter.s0;
    const size_t pixels = (size_t)dil_out.s2 * dil_out.s3;
    const int blocks = (K + KC_PW_BLOCK - 1) / KC_PW_BLOCK;
    const size_t idx = get_global_id(0);
    if (idx >= (size_t)in.s0 * blocks * pixels) return;

    const size_t p = idx % pixels;
    const int k0 = (int)((idx / pixels) % blocks) * KC_PW_BLOCK;
    const int n = (int)(idx / (pixels * blocks));
    float acc[KC_PW_BLOCK];
    for (int j = 0; j < KC_PW_BLOCK; ++j) {
        acc[j] = (has_bias && k0 + j < K) ? LOAD(bias, k0 + j) : 0.0f;
    }
    for (int c = 0; c < C; ++c) {
        const float xv = LOAD(x, ((size_t)n * C + c) * pixels + p);
        for (int j = 0; j < KC_PW_BLOCK; ++j) {
            // Channels past K read a valid weight (row K-1) and are never stored.
            const int k = min(k0 + j, K - 1);
            acc[j] += xv * LOAD(w, (size_t)k * C + c);
        }
    }
    for (int j = 0; j < KC_PW_BLOCK && k0 + j < K; ++j) {
        STORE(y, ((size_t)n * K + k0 + j) * pixels + p, kc_activate(acc[j]));
    }
}
