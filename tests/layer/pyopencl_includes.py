"""A pyopencl application whose program includes files, for the layer tests:
builds the text of SOURCE with OPTIONS... (pyopencl's own cache off through
PYOPENCL_NO_CACHE) and prints `value=N`, what its kernel `k` writes; or,
when the build fails, `build=failed` and the build log on one line."""
import sys
import time

import numpy as np
import pyopencl as cl

with open(sys.argv[1]) as f:
    source = f.read()
ctx = cl.Context(cl.get_platforms()[0].get_devices())
queue = cl.CommandQueue(ctx)
start = time.monotonic()
try:
    program = cl.Program(ctx, source).build(options=sys.argv[2:])
except cl.RuntimeError as e:
    print("build_ms=%d" % ((time.monotonic() - start) * 1000))
    print("build=failed")
    print("log=" + str(e).replace("\n", "|"))
    sys.exit(0)
out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4)
program.k(queue, (1,), None, out)
value = np.zeros(1, dtype=np.int32)
cl.enqueue_copy(queue, value, out)
queue.finish()
print("value=%d" % value[0])
