"""A small pyopencl operator on kcache: conv2d in f16 with a numpy fallback.

The operator asks kcache for its program once. When kcache answers with a
program, the convolution runs on the OpenCL device (through kcache.ops, the
typed launcher); when it reports that the
compile timed out or crashed (now, or recorded from an earlier run) or that
the device cannot run the variant, the operator computes the same result
with numpy instead, so the caller always gets an answer.

    python3 conv2d_f16.py [DEADLINE_SECONDS]   # first OpenCL device; prints the path taken
"""

import sys
from typing import Optional

import numpy as np
import pyopencl as cl
import pyopencl.array as cl_array

import kcache
import kcache.ops

# What sends the operator to numpy: kcache could not give a program in time.
FALLBACK = (kcache.Timeout, kcache.Crashed, kcache.Unsupported, kcache.NotCached, kcache.NotReady)


class Conv2dF16:
    """y = act(conv2d(x, w) + bias): NCHW, stride 1, zero padding `pad`, one
    group; values stored as float16, accumulated in float32."""

    def __init__(self, queue: cl.CommandQueue, cache: kcache.Cache, act: str = "none",
                 pad: int = 1, deadline: float = 2.0) -> None:
        self.queue, self.act, self.pad = queue, act, pad
        self.program: Optional[cl.Program] = None
        self.fallback_reason = ""
        try:
            self.program = cache.program(queue.context, queue.device, "conv2d", dtype="f16",
                                         act=act, deadline=deadline)
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

    def _device(self, x, w, bias):
        args = [cl_array.to_device(self.queue, a) for a in (x, w, bias)]
        y = kcache.ops.conv2d(self.queue, self.program, *args, padding=self.pad)
        return y.get()

    def _numpy(self, x, w, bias):
        k, _, r, s = w.shape
        p = self.pad
        xp = np.pad(x.astype(np.float32), ((0, 0), (0, 0), (p, p), (p, p)))
        oh, ow = xp.shape[2] - r + 1, xp.shape[3] - s + 1
        w32 = w.astype(np.float32)
        y = np.zeros((x.shape[0], k, oh, ow), dtype=np.float32)
        y += bias.astype(np.float32)[None, :, None, None]
        for i in range(r):
            for j in range(s):
                y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + oh, j:j + ow], w32[:, :, i, j])
        if self.act == "relu":
            y = np.maximum(y, 0.0)
        return y.astype(np.float16)


def main() -> None:
    # Optional argument: the compile deadline in seconds (default 2).
    deadline = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 8, 8))
    w = rng.standard_normal((4, 3, 3, 3))
    bias = rng.standard_normal(4)
    with kcache.Cache() as cache:
        op = Conv2dF16(queue, cache, act="relu", deadline=deadline)
        y = op(x, w, bias)
    rung = op.program.kcache_outcome.rung if op.program is not None else "-"
    print(f"conv2d f16 on {op.path} (kcache rung: {rung}) output {y.shape} "
          f"mean {float(y.astype(np.float32).mean()):.4f}"
          + (f"; fallback because {op.fallback_reason}" if op.fallback_reason else ""))


if __name__ == "__main__":
    main()
