"""Reference counts: a program holds exactly one reference of its own, outlives
the Cache, and can be released only once; the same without pyopencl."""

import gc
import subprocess
import sys

import numpy as np
import pyopencl as cl
import pytest

import kcache
from conftest import child_env
from kernel_runs import assert_close, dot_reference, run_dot


def refs(obj, info) -> int:
    return obj.get_info(info.REFERENCE_COUNT)


def test_program_outlives_the_cache_and_holds_one_reference(store, ocl):
    ctx = cl.Context([ocl.device])  # a context of this test alone
    base = refs(ctx, cl.context_info)
    queue = cl.CommandQueue(ctx)
    c = kcache.Cache(dir=store)
    prg = c.program(ctx, ocl.device, "dot", dtype="f32", ls=256)
    assert refs(ctx, cl.context_info) > base  # the program holds its context
    c.close()
    del c
    gc.collect()
    # Only pyopencl's own reference is left: kcache handed over the one it gave
    # out (retain=False) and released its in-process one when the cache closed.
    assert refs(prg, cl.program_info) == 1
    x = np.linspace(-1, 1, 600).reshape(2, 300)
    assert_close(run_dot(queue, prg, x, x, "f32"), dot_reference(x, x, "f32"), "f32")
    del prg, queue
    gc.collect()
    assert refs(ctx, cl.context_info) == base  # nothing leaked, nothing released twice


def test_repeat_hits_are_separate_references(cache, ocl):
    a = cache.program(ocl.context, ocl.device, "dot", dtype="f32")
    b = cache.program(ocl.context, ocl.device, "dot", dtype="f32")
    assert b.kcache_outcome.rung == "in_process"
    assert a.int_ptr == b.int_ptr
    shared = refs(a, cl.program_info)
    del a
    gc.collect()
    assert refs(b, cl.program_info) == shared - 1


# Without pyopencl: raw handles from ctypes in, ProgramHandle out.
NO_PYOPENCL = r"""
import ctypes, gc, sys
sys.modules["pyopencl"] = None  # `import pyopencl` now raises ImportError
import kcache

cl = ctypes.CDLL("libOpenCL.so.1")
vp, u32 = ctypes.c_void_p, ctypes.c_uint32
cl.clCreateContext.restype = vp
cl.clCreateContext.argtypes = [vp, u32, ctypes.POINTER(vp), vp, vp, ctypes.POINTER(ctypes.c_int32)]
for f in ("clGetProgramInfo", "clGetContextInfo"):
    getattr(cl, f).argtypes = [vp, u32, ctypes.c_size_t, vp, vp]
cl.clReleaseProgram.argtypes = [vp]
cl.clRetainProgram.argtypes = [vp]

def count(getter, handle, param):
    n = u32()
    assert getter(handle, param, 4, ctypes.byref(n), None) == 0
    return n.value

platforms = (vp * 16)()
n = u32()
cl.clGetPlatformIDs(16, platforms, ctypes.byref(n))
device = vp()
for p in platforms[: n.value]:
    name = ctypes.create_string_buffer(256)
    cl.clGetPlatformInfo(vp(p), 0x0902, 255, name, None)
    if sys.argv[1].encode() in name.value:
        assert cl.clGetDeviceIDs(vp(p), 0xFFFFFFFF, 1, ctypes.byref(device), None) == 0
err = ctypes.c_int32()
ctx = cl.clCreateContext(None, 1, ctypes.byref(device), None, None, ctypes.byref(err))
assert err.value == 0 and ctx
base = count(cl.clGetContextInfo, ctx, 0x1080)

cache = kcache.Cache()
h = cache.program(ctx, device.value, "dot", dtype="f32")
assert isinstance(h, kcache.ProgramHandle), type(h)
assert h.kcache_outcome.rung == "jit"
ptr = h.int_ptr
cache.close()
assert count(cl.clGetProgramInfo, ptr, 0x1160) == 1  # the handle's own reference
cl.clRetainProgram(ptr)  # a witness reference to watch the count through
del h
gc.collect()
assert count(cl.clGetProgramInfo, ptr, 0x1160) == 1  # the handle released its one

with kcache.Cache() as cache:
    h = cache.program(ctx, device.value, "dot", dtype="f32")
assert h.kcache_outcome.rung == "user_store"
taken = h.detach()
assert h.int_ptr == 0 and not h
try:
    h.detach()
    raise SystemExit("a second detach() handed out the reference again")
except ValueError as e:
    assert "already handed over" in str(e)
del h
gc.collect()
assert count(cl.clGetProgramInfo, taken, 0x1160) == 1  # still ours: not released by del
cl.clReleaseProgram(taken)
cl.clReleaseProgram(ptr)
assert count(cl.clGetContextInfo, ctx, 0x1080) == base
print("ok")
"""


def test_without_pyopencl_a_program_handle_owns_one_reference(store):
    from conftest import platform_name

    done = subprocess.run(
        [sys.executable, "-c", NO_PYOPENCL, platform_name()],
        env=child_env(store),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("ok")


def test_forget_releases_what_the_cache_keeps_for_a_context(store, ocl):
    ctx = cl.Context([ocl.device])
    with kcache.Cache(dir=store) as c:
        prg = c.program(ctx, ocl.device, "dot", dtype="f32")
        held = refs(prg, cl.program_info)
        assert held == 2  # ours, and the one the cache keeps for repeat hits
        assert c.forget(ctx) == 1
        assert refs(prg, cl.program_info) == 1
        assert c.forget(ctx.int_ptr) == 0  # nothing left to release
        again = c.program(ctx, ocl.device, "dot", dtype="f32")
        assert again.kcache_outcome.rung == "user_store"  # built again, not a repeat hit
        assert c.stats()["programs_released"] >= 1
        with pytest.raises(TypeError, match="context must be"):
            c.forget(ocl.device)
        with pytest.raises(kcache.InvalidArgument, match="context is None"):
            c.forget(None)
