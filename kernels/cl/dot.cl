// dot: batched vector dot product, f32 accumulation, two passes.
//
// Pass 1, dot_partial: global (G * KC_LOCAL_SIZE, batch), local (KC_LOCAL_SIZE, 1).
//   Row b of x and y starts at b * n. Work-group g of row b sums a strided share
//   of the row and writes partial[b * G + g] (a tree reduction in local memory).
// Pass 2, dot_finish: global (KC_LOCAL_SIZE, batch), local (KC_LOCAL_SIZE, 1).
//   Sums the G partials of row b and stores out[b] in the element type.
// n may be 0 (the result is 0); n * batch must fit in 32 bits.
//
// -DKC_HALF_ARITH=1 (f16 only, needs cl_khr_fp16): products are formed in
// native half arithmetic and accumulated in f32.

#ifndef KC_LOCAL_SIZE
#error "kcache: dot needs -DKC_LOCAL_SIZE"
#endif

#if KC_HALF_ARITH
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define KC_PRODUCT(x, y, i) ((float)((x)[(i)] * (y)[(i)]))
#else
#define KC_PRODUCT(x, y, i) (LOAD(x, i) * LOAD(y, i))
#endif

// Sums scratch[0 .. KC_LOCAL_SIZE) into scratch[0]; every item must call it.
inline void kc_tree_sum(__local float* scratch, uint lid) {
    for (uint half_width = KC_LOCAL_SIZE / 2; half_width > 0; half_width /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < half_width) scratch[lid] += scratch[lid + half_width];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

__kernel __attribute__((reqd_work_group_size(KC_LOCAL_SIZE, 1, 1))) void dot_partial(
    __global const ELEM* x, __global const ELEM* y, uint n, __global float* partial) {
    __local float scratch[KC_LOCAL_SIZE];
    const uint lid = get_local_id(0);
    const uint group = get_group_id(0);
    const uint groups = get_num_groups(0);
    const uint row = get_global_id(1);
    __global const ELEM* xr = x + (size_t)row * n;
    __global const ELEM* yr = y + (size_t)row * n;

    float acc = 0.0f;
    for (uint i = group * KC_LOCAL_SIZE + lid; i < n; i += groups * KC_LOCAL_SIZE) {
        acc += KC_PRODUCT(xr, yr, i);
    }
    scratch[lid] = acc;
    kc_tree_sum(scratch, lid);
    if (lid == 0) partial[(size_t)row * groups + group] = scratch[0];
}

__kernel __attribute__((reqd_work_group_size(KC_LOCAL_SIZE, 1, 1))) void dot_finish(
    __global const float* partial, uint groups, __global ELEM* out) {
    __local float scratch[KC_LOCAL_SIZE];
    const uint lid = get_local_id(0);
    const uint row = get_global_id(1);

    float acc = 0.0f;
    for (uint g = lid; g < groups; g += KC_LOCAL_SIZE) acc += partial[(size_t)row * groups + g];
    scratch[lid] = acc;
    kc_tree_sum(scratch, lid);
    if (lid == 0) STORE(out, row, scratch[0]);
}
