"""A pyopencl application for the layer tests: builds two programs with
cl.Program(ctx, src).build() (pyopencl's own cache off through
PYOPENCL_NO_CACHE) and checks what they compute."""
import sys

import numpy as np
import pyopencl as cl

ctx = cl.Context(cl.get_platforms()[0].get_devices())
queue = cl.CommandQueue(ctx)
scale = cl.Program(ctx, """
kernel void scale(global float* a, float f) { a[get_global_id(0)] *= f; }
""").build()
add = cl.Program(ctx, """
kernel void add(global const float* a, global const float* b, global float* c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}
""").build(options=["-DUNUSED=1"])

a = np.arange(64, dtype=np.float32)
b = np.full(64, 0.5, dtype=np.float32)
mf = cl.mem_flags
a_buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
b_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
c_buf = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
scale.scale(queue, a.shape, None, a_buf, np.float32(3))
add.add(queue, a.shape, None, a_buf, b_buf, c_buf)
c = np.empty_like(a)
cl.enqueue_copy(queue, c, c_buf)
queue.finish()
expected = a * 3 + b
if not np.array_equal(c, expected):
    print("wrong results:", c[:4], "expected", expected[:4])
    sys.exit(1)
print("results ok;", scale.get_info(cl.program_info.KERNEL_NAMES),
      add.get_info(cl.program_info.KERNEL_NAMES))
