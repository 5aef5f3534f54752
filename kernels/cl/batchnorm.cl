// batchnorm over NCHW (per channel c), f32 statistics and arithmetic.
//
// batchnorm_inference(x, mean, var, gamma, beta, y, shape, eps)
//   x, y [N][C][HW] elements; mean, var, gamma, beta [C] f32; shape = (N, C, HW, 0).
//   scale = gamma * rsqrt(var + eps), shift = beta - mean * scale,
//   y = act(x * scale + shift). One item per element; global = N*C*HW rounded
//   up to KC_LOCAL_SIZE.
// batchnorm_stats(x, mean, var, shape)
//   Training forward, first step: per channel mean and biased variance of the
//   N*HW values, written to mean[c], var[c] (0 and 0 for an empty channel).
//   One work-group per channel: global = C * KC_LOCAL_SIZE, local KC_LOCAL_SIZE.
//   Each item runs Welford's update over its strided share; the items' partial
//   (count, mean, M2) triples are merged pairwise in a tree (Chan et al.), so no
//   sum of squares is ever formed and large means do not cancel.
//   Training forward, second step: batchnorm_inference with these mean and var.

#ifndef KC_LOCAL_SIZE
#error "kcache: batchnorm needs -DKC_LOCAL_SIZE"
#endif

__kernel __attribute__((reqd_work_group_size(KC_LOCAL_SIZE, 1, 1))) void batchnorm_inference(
    __global const ELEM* x, __global const float* mean, __global const float* var,
    __global const float* gamma, __global const float* beta, __global ELEM* y, int4 shape,
    float eps) {
    const size_t pixels = (size_t)shape.s2;
    const size_t idx = get_global_id(0);
    if (idx >= (size_t)shape.s0 * shape.s1 * pixels) return;
    const int c = (int)((idx / pixels) % shape.s1);
    const float scale = gamma[c] * rsqrt(var[c] + eps);
    const float shift = beta[c] - mean[c] * scale;
    STORE(y, idx, kc_activate(LOAD(x, idx) * scale + shift));
}

__kernel __attribute__((reqd_work_group_size(KC_LOCAL_SIZE, 1, 1))) void batchnorm_stats(
    __global const ELEM* x, __global float* mean, __global float* var, int4 shape) {
    __local float count_l[KC_LOCAL_SIZE];
    __local float mean_l[KC_LOCAL_SIZE];
    __local float m2_l[KC_LOCAL_SIZE];
    const int C = shape.s1;
    const size_t pixels = (size_t)shape.s2;
    const size_t per_channel = (size_t)shape.s0 * pixels;
    const uint lid = get_local_id(0);
    const int c = (int)get_group_id(0);

    float n = 0.0f, m = 0.0f, m2 = 0.0f;
    for (size_t j = lid; j < per_channel; j += KC_LOCAL_SIZE) {
        const size_t image = j / pixels;
        const float v = LOAD(x, (image * C + c) * pixels + j % pixels);
        n += 1.0f;
        const float d = v - m;
        m += d / n;
        m2 += d * (v - m);
    }
    count_l[lid] = n;
    mean_l[lid] = m;
    m2_l[lid] = m2;
    for (uint half_width = KC_LOCAL_SIZE / 2; half_width > 0; half_width /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < half_width && count_l[lid + half_width] > 0.0f) {
            const float na = count_l[lid], nb = count_l[lid + half_width];
            const float nt = na + nb;
            const float d = mean_l[lid + half_width] - mean_l[lid];
            mean_l[lid] += d * (nb / nt);
            m2_l[lid] += m2_l[lid + half_width] + d * d * (na * (nb / nt));
            count_l[lid] = nt;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        mean[c] = mean_l[0];
        var[c] = count_l[0] > 0.0f ? m2_l[0] / count_l[0] : 0.0f;
    }
}
