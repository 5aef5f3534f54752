"""Runs the registry kernels through pyopencl on kcache's programs, and the
numpy references they are checked against.

Element types in memory: f32 (float32), f16 (IEEE half) and bf16 (the upper
16 bits of a float32, stored as uint16, rounded to nearest even). Kernels
compute in f32; the references compute in float64 on the rounded inputs.
"""

import numpy as np
import pyopencl as cl
import pyopencl.cltypes as cltypes

LOCAL_SIZE = {"dot": 256, "conv2d": 64, "batchnorm": 256}
# Relative tolerance of a result element: the output's rounding plus f32 sums.
RTOL = {"f32": 1e-4, "f16": 2e-3, "bf16": 1e-2}


def encode(values: np.ndarray, dtype: str) -> np.ndarray:
    """`values` (float) as the kernel reads them from memory."""
    v = np.ascontiguousarray(values, dtype=np.float32)
    if dtype == "f32":
        return v
    if dtype == "f16":
        return v.astype(np.float16)
    bits = v.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def decode(data: np.ndarray, dtype: str) -> np.ndarray:
    """Memory contents of element type `dtype` as float64."""
    if dtype == "bf16":
        return (data.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return data.astype(np.float64)


def rounded(values: np.ndarray, dtype: str) -> np.ndarray:
    """`values` rounded to `dtype` and back: what the kernel actually reads."""
    return decode(encode(values, dtype), dtype)


def _buffer(ctx, host: np.ndarray):
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    return cl.Buffer(ctx, flags, hostbuf=host)


def _read(queue, buf, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)
    cl.enqueue_copy(queue, out, buf)
    queue.finish()
    return out


def _padded(count: int, local: int) -> int:
    return max(1, -(-count // local)) * local


def run_dot(queue, program, x: np.ndarray, y: np.ndarray, dtype: str) -> np.ndarray:
    """out[b] = sum(x[b] * y[b]) for x, y of shape (batch, n)."""
    ctx = queue.context
    batch, n = x.shape
    ls, groups = LOCAL_SIZE["dot"], 2
    xb, yb = _buffer(ctx, encode(x, dtype)), _buffer(ctx, encode(y, dtype))
    partial = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * batch * groups)
    out_host = encode(np.zeros(batch), dtype)
    out = _buffer(ctx, out_host)
    program.dot_partial(queue, (groups * ls, batch), (ls, 1), xb, yb, np.uint32(n), partial)
    program.dot_finish(queue, (ls, batch), (ls, 1), partial, np.uint32(groups), out)
    return decode(_read(queue, out, out_host), dtype)


def dot_reference(x, y, dtype):
    return (rounded(x, dtype) * rounded(y, dtype)).sum(axis=1)


def run_conv2d(queue, program, x, w, bias, dtype, pad=1):
    """NCHW direct convolution, stride 1, padding `pad`, dilation 1, one group."""
    ctx = queue.context
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    oh, ow = h + 2 * pad - r + 1, wd + 2 * pad - s + 1
    y_host = encode(np.zeros((n, k, oh, ow)), dtype)
    xb, wb, bb = (_buffer(ctx, encode(a, dtype)) for a in (x, w, bias))
    yb = _buffer(ctx, y_host)
    args = (
        cltypes.make_int4(n, c, h, wd),
        cltypes.make_int4(k, r, s, 1),
        cltypes.make_int4(1, 1, pad, pad),
        cltypes.make_int4(1, 1, oh, ow),
        np.int32(1),
    )
    ls = LOCAL_SIZE["conv2d"]
    program.conv2d_direct(queue, (_padded(n * k * oh * ow, ls),), (ls,), xb, wb, bb, yb, *args)
    return decode(_read(queue, yb, y_host), dtype)


def conv2d_reference(x, w, bias, dtype, pad=1, relu=False):
    x, w, bias = rounded(x, dtype), rounded(w, dtype), rounded(bias, dtype)
    k, _, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = xp.shape[2] - r + 1, xp.shape[3] - s + 1
    y = np.zeros((x.shape[0], k, oh, ow))
    for i in range(r):
        for j in range(s):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, i : i + oh, j : j + ow], w[:, :, i, j])
    y += bias[None, :, None, None]
    return np.maximum(y, 0.0) if relu else y


def run_batchnorm(queue, program, x, mean, var, gamma, beta, eps, dtype):
    """Inference batchnorm over NCHW with per-channel f32 statistics."""
    ctx = queue.context
    n, c, h, w = x.shape
    y_host = encode(np.zeros(x.shape), dtype)
    xb, yb = _buffer(ctx, encode(x, dtype)), _buffer(ctx, y_host)
    stats = [_buffer(ctx, np.asarray(a, dtype=np.float32)) for a in (mean, var, gamma, beta)]
    ls = LOCAL_SIZE["batchnorm"]
    shape = cltypes.make_int4(n, c, h * w, 0)
    program.batchnorm_inference(
        queue, (_padded(x.size, ls),), (ls,), xb, *stats, yb, shape, np.float32(eps)
    )
    return decode(_read(queue, yb, y_host), dtype)


def batchnorm_reference(x, mean, var, gamma, beta, eps, dtype):
    x = rounded(x, dtype)
    shape = (1, -1, 1, 1)
    scale = gamma.reshape(shape) / np.sqrt(var.reshape(shape) + eps)
    return (x - mean.reshape(shape)) * scale + beta.reshape(shape)


def assert_close(got: np.ndarray, want: np.ndarray, dtype: str) -> None:
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=RTOL[dtype] * scale)
