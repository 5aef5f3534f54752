"""A small pyopencl operator on kcache: conv2d in f16 with a numpy fallback.

The operator asks kcache for its program once. When kcache answers with a
program, the convolution runs on the OpenCL device; when it reports that the
compile timed out or crashed (now, or recorded from an earlier run) or that
the device cannot run the variant, the operator computes the same result
with numpy instead, so the caller always gets an answer.

    python3 conv2d_f16.py        # on the first OpenCL device; prints the path taken
"""

from typing import Optional

import numpy as np
import pyopencl as cl
import pyopencl.cltypes as cltypes

import kcache

# What sends the operator to numpy: kcache could not give a program in time.
FALLBACK = (kcache.Timeout, kcache.Crashed, kcache.Unsupported, kcache.NotCached, kcache.NotReady)


class Conv2dF16:
    """y = act(conv2d(x, w) + bias): NCHW, stride 1, zero padding `pad`, one
    group; values stored as float16, accumulated in float32."""

    LOCAL_SIZE = 64

    def __init__(self, queue: cl.CommandQueue, cache: kcache.Cache, act: str = "none",
                 pad: int = 1, deadline: float = 2.0) -> None:
        self.queue, self.act, self.pad = queue, act, pad
        self.program: Optional[cl.Program] = None
        self.fallback_reason = ""
        try:
            self.program = cache.program(queue.context, queue.device, "conv2d", dtype="f16",
                                         act=act, ls=self.LOCAL_SIZE, deadline=deadline)
        except FALLBACK as e:
            self.fallback_reason = str(e)

    @property
    def path(self) -> str:
        """'device' or 'numpy': where this operator computes."""
        return "device" if self.program is not None else "numpy"

    def __call__(self, x: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
        x, w, bias = (np.ascontiguousarray(a, dtype=np.float16) for a in (x, w, bias))
        if self.program is None:
            return self._numpy(x, w, bias)
        return self._device(x, w, bias)

    def _shape(self, x, w):
        n, c, h, wd = x.shape
        k, _, r, s = w.shape
        return n, c, h, wd, k, r, s, h + 2 * self.pad - r + 1, wd + 2 * self.pad - s + 1

    def _device(self, x, w, bias):
        n, c, h, wd, k, r, s, oh, ow = self._shape(x, w)
        ctx, mf = self.queue.context, cl.mem_flags
        xb, wb, bb = (cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
                      for a in (x, w, bias))
        y = np.empty((n, k, oh, ow), dtype=np.float16)
        yb = cl.Buffer(ctx, mf.WRITE_ONLY, y.nbytes)
        items = n * k * oh * ow
        global_size = -(-items // self.LOCAL_SIZE) * self.LOCAL_SIZE
        self.program.conv2d_direct(
            self.queue, (global_size,), (self.LOCAL_SIZE,), xb, wb, bb, yb,
            cltypes.make_int4(n, c, h, wd), cltypes.make_int4(k, r, s, 1),
            cltypes.make_int4(1, 1, self.pad, self.pad), cltypes.make_int4(1, 1, oh, ow),
            np.int32(1))
        cl.enqueue_copy(self.queue, y, yb)
        self.queue.finish()
        return y

    def _numpy(self, x, w, bias):
        _, _, _, _, k, r, s, oh, ow = self._shape(x, w)
        p = self.pad
        xp = np.pad(x.astype(np.float32), ((0, 0), (0, 0), (p, p), (p, p)))
        w32 = w.astype(np.float32)
        y = np.zeros((x.shape[0], k, oh, ow), dtype=np.float32) + bias.astype(np.float32)[
            None, :, None, None]
        for i in range(r):
            for j in range(s):
                y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + oh, j:j + ow], w32[:, :, i, j])
        if self.act == "relu":
            y = np.maximum(y, 0.0)
        return y.astype(np.float16)


def main() -> None:
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 8, 8))
    w = rng.standard_normal((4, 3, 3, 3))
    bias = rng.standard_normal(4)
    with kcache.Cache() as cache:
        op = Conv2dF16(queue, cache, act="relu")
        y = op(x, w, bias)
    rung = op.program.kcache_outcome.rung if op.program is not None else "-"
    print(f"conv2d f16 on {op.path} (kcache rung: {rung}) output {y.shape} "
          f"mean {float(y.astype(np.float32).mean()):.4f}"
          + (f"; fallback because {op.fallback_reason}" if op.fallback_reason else ""))


if __name__ == "__main__":
    main()
