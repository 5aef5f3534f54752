// An operator library's own kernel: y = a * x + y.
__kernel void my_saxpy(float a, __global const float* x, __global float* y, uint n) {
    const size_t i = get_global_id(0);
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
