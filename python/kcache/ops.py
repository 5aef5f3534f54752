"""Typed launchers of the registry kernels on pyopencl arrays or buffers.

Each function takes a queue and a program from :meth:`kcache.Cache.program`
for the matching kernel (it knows the variant's local size and element type)
and enqueues the kernel with the right entry point, work sizes and
arguments. Element types in device memory: f32 is numpy.float32, f16 is
numpy.float16 and bf16 is numpy.uint16 holding bfloat16 bits; batchnorm's
per-channel parameters are float32 in every variant.

With pyopencl arrays the result is a new array (or ``out``) whose pending
event is the launch; with buffers pass ``shape=`` (and ``out=``) and get the
launch's pyopencl.Event back. Launches wait for the inputs' pending events.
Failures raise :class:`kcache.LaunchError` with the OpenCL status ``code``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pyopencl as cl
import pyopencl.array as cl_array

from . import _kcache
from ._errors import Error

ELEMENT_TYPES: Dict[str, Any] = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16}


class LaunchError(Error):
    """An OpenCL call of a launch failed; ``code`` is its status (e.g. -54)."""

    status = "device_error"

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def _variant(program: Any, kernel: str) -> Tuple[int, Any]:
    """(local size, element type) of `program`, which must be a `kernel` program."""
    variant = getattr(program, "__dict__", {}).get("kcache_variant")
    if variant is None:
        raise TypeError("program must come from kcache.Cache.program() (it names its variant)")
    name, local_size, dtype = _kcache.variant_info(*variant)
    if name != kernel:
        raise TypeError(f"kcache.ops.{kernel} needs a {kernel} program, not a {name} program")
    return local_size, ELEMENT_TYPES[dtype]


def _events(*arrays: Any) -> List[int]:
    return [e.int_ptr for a in arrays if isinstance(a, cl_array.Array) for e in a.events]


def _mem(a: Any, what: str, dtype: Any) -> int:
    if a is None:
        return 0
    if isinstance(a, cl_array.Array):
        if a.dtype != np.dtype(dtype):
            raise TypeError(f"{what} holds {a.dtype}, the program's elements are "
                            f"{np.dtype(dtype)}")
        if not a.flags.forc or a.offset:
            raise ValueError(f"{what} must be a contiguous array without offset")
        return a.base_data.int_ptr
    if isinstance(a, cl.Buffer):
        return a.int_ptr
    raise TypeError(f"{what} must be a pyopencl.array.Array or pyopencl.Buffer, "
                    f"not {type(a).__qualname__}")


def _launch(fn: Any, queue: Any, program: Any, local_size: int, wait: List[int], *args: Any):
    if not isinstance(queue, cl.CommandQueue):
        raise TypeError(f"queue must be a pyopencl.CommandQueue, not {type(queue).__qualname__}")
    target = _kcache.LaunchTarget(queue.int_ptr, program.int_ptr, local_size, wait)
    event, code, message = fn(target, *args)
    if not event:
        raise LaunchError(message, code)
    return cl.Event.from_int_ptr(event, retain=False)


def _result(out: Any, event: Any) -> Any:
    if isinstance(out, cl_array.Array):
        out.add_event(event)
        return out
    return event


def _shape_of(x: Any, shape: Optional[Sequence[int]], what: str) -> Tuple[int, ...]:
    if isinstance(x, cl_array.Array):
        return tuple(x.shape)
    if shape is None:
        raise TypeError(f"{what} is a buffer: pass shape=")
    return tuple(int(v) for v in shape)


def _output(queue: Any, x: Any, out: Any, shape: Tuple[int, ...], dtype: Any) -> Any:
    if out is not None:
        _mem(out, "out", dtype)
        return out
    if not isinstance(x, cl_array.Array):
        raise TypeError("with buffers, pass out= (a buffer for the result)")
    return cl_array.empty(queue, shape, dtype)


def dot(queue: Any, program: Any, x: Any, y: Any, *, shape: Optional[Sequence[int]] = None,
        out: Any = None) -> Any:
    """out[r] = sum_i x[r, i] * y[r, i] for x and y of shape (rows, n), or (n,) for one
    row (out then has shape (1,)); accumulated in f32, stored in the program's
    element type."""
    local_size, dtype = _variant(program, "dot")
    dims = _shape_of(x, shape, "x")
    if isinstance(y, cl_array.Array) and tuple(y.shape) != dims:
        raise ValueError(f"x has shape {dims}, y has shape {tuple(y.shape)}")
    rows, n = (1, dims[0]) if len(dims) == 1 else dims
    result = _output(queue, x, out, (rows,), dtype)
    partial = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE,
                        _kcache.dot_partial_bytes(n, rows, local_size))
    event = _launch(_kcache.launch_dot, queue, program, local_size, _events(x, y, out), n, rows,
                    _mem(x, "x", dtype), _mem(y, "y", dtype), partial.int_ptr,
                    _mem(result, "out", dtype))
    return _result(result, event)


def _pair(v: Any, what: str) -> Tuple[int, int]:
    pair = (v, v) if isinstance(v, int) else tuple(v)
    if len(pair) != 2:
        raise ValueError(f"{what} must be an int or a pair of ints")
    return int(pair[0]), int(pair[1])


def conv2d(queue: Any, program: Any, x: Any, w: Any, bias: Any = None, *, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1,
           shape: Optional[Sequence[int]] = None, weight_shape: Optional[Sequence[int]] = None,
           out: Any = None) -> Any:
    """NCHW convolution: x (N, C, H, W), w (K, C/groups, R, S), optional bias (K,),
    with the program's fused activation; returns y (N, K, OH, OW)."""
    local_size, dtype = _variant(program, "conv2d")
    n, c, h, wd = _shape_of(x, shape, "x")
    k, _, r, s = _shape_of(w, weight_shape, "w")
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride, "stride"), _pair(padding, "padding"), \
        _pair(dilation, "dilation")
    oh = (h + 2 * ph - dh * (r - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (s - 1) - 1) // sw + 1
    result = _output(queue, x, out, (n, k, oh, ow), dtype)
    dims = [n, c, h, wd, k, r, s, sh, sw, ph, pw, dh, dw, groups]
    event = _launch(_kcache.launch_conv2d, queue, program, local_size, _events(x, w, bias, out),
                    dims, _mem(x, "x", dtype), _mem(w, "w", dtype), _mem(bias, "bias", dtype),
                    _mem(result, "out", dtype))
    return _result(result, event)


def batchnorm(queue: Any, program: Any, x: Any, mean: Any, var: Any, gamma: Any, beta: Any, *,
              eps: float = 1e-5, training: bool = False, shape: Optional[Sequence[int]] = None,
              out: Any = None) -> Any:
    """Per-channel batch normalisation of x (N, C, H, W) or (N, C, HW) with f32
    mean, var, gamma, beta of shape (C,) and the program's fused activation.
    training=True first writes the batch's mean and biased variance into
    `mean` and `var`, then normalises with them."""
    local_size, dtype = _variant(program, "batchnorm")
    dims = _shape_of(x, shape, "x")
    n, c = dims[0], dims[1]
    hw = int(np.prod(dims[2:])) if len(dims) > 2 else 1
    result = _output(queue, x, out, dims, dtype)
    stats = [_mem(a, name, np.float32)
             for a, name in ((mean, "mean"), (var, "var"), (gamma, "gamma"), (beta, "beta"))]
    bufs = [_mem(x, "x", dtype)] + stats + [_mem(result, "out", dtype)]
    event = _launch(_kcache.launch_batchnorm, queue, program, local_size,
                    _events(x, mean, var, gamma, beta, out), n, c, hw, bufs, float(eps), training)
    return _result(result, event)
