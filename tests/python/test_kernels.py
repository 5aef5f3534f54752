"""dot, conv2d and batchnorm in f32/f16/bf16: kcache's programs run through
pyopencl on PoCL (by hand, and through kcache.ops) and compared with numpy
references."""

import numpy as np
import pyopencl as cl
import pyopencl.array as cl_array
import pytest

import kcache
from kernel_runs import (
    LOCAL_SIZE,
    assert_close,
    batchnorm_reference,
    conv2d_reference,
    decode,
    dot_reference,
    encode,
    run_batchnorm,
    run_conv2d,
    run_dot,
)

DTYPES = ["f32", "f16", "bf16"]


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    c = kcache.Cache(dir=str(tmp_path_factory.mktemp("store")), jit_timeout=300.0)
    yield c
    c.close()


def get_program(cache, ocl, kernel, dtype, **params):
    prg = cache.program(
        ocl.context, ocl.device, kernel, dtype=dtype, ls=LOCAL_SIZE[kernel], **params
    )
    assert isinstance(prg, cl.Program)
    assert prg.kcache_outcome.ok
    assert prg.kcache_outcome.rung == "jit", prg.kcache_outcome
    assert len(prg.kcache_outcome.key) == 64
    return prg


@pytest.mark.parametrize("dtype", DTYPES)
def test_dot(shared_cache, ocl, dtype):
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (3, 1000))
    y = rng.uniform(-1, 1, (3, 1000))
    prg = get_program(shared_cache, ocl, "dot", dtype)
    assert_close(run_dot(ocl.queue, prg, x, y, dtype), dot_reference(x, y, dtype), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv2d_relu(shared_cache, ocl, dtype):
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, (2, 3, 7, 6))
    w = rng.uniform(-1, 1, (4, 3, 3, 3))
    bias = rng.uniform(-1, 1, 4)
    prg = get_program(shared_cache, ocl, "conv2d", dtype, act="relu")
    got = run_conv2d(ocl.queue, prg, x, w, bias, dtype)
    want = conv2d_reference(x, w, bias, dtype, relu=True)
    assert (want == 0).any() and (want > 0).any()  # the activation is exercised
    assert_close(got, want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_batchnorm(shared_cache, ocl, dtype):
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (2, 3, 5, 4))
    mean, var = rng.uniform(-1, 1, 3), rng.uniform(0.5, 2, 3)
    gamma, beta = rng.uniform(0.5, 1.5, 3), rng.uniform(-1, 1, 3)
    prg = get_program(shared_cache, ocl, "batchnorm", dtype)
    got = run_batchnorm(ocl.queue, prg, x, mean, var, gamma, beta, 1e-5, dtype)
    assert_close(got, batchnorm_reference(x, mean, var, gamma, beta, 1e-5, dtype), dtype)


def test_repeat_is_answered_in_process_by_alias_and_numpy_dtype(shared_cache, ocl):
    first = shared_cache.program(ocl.context, ocl.device, "batchnorm", dtype="f16", ls=256)
    again = shared_cache.program(ocl.context, ocl.device, "batch_norm", dtype=np.float16, ls=256)
    assert again.kcache_outcome.rung == "in_process"
    assert again.kcache_outcome.key == first.kcache_outcome.key


# kcache.ops: the installed typed launchers on pyopencl arrays and buffers,
# with the programs above (same keys, so answered in process).
ELEMENT = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16}


def device_array(ocl, values, dtype):
    return cl_array.to_device(ocl.queue, encode(values, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_ops_dot_on_arrays(shared_cache, ocl, dtype):
    rng = np.random.default_rng(4)
    x, y = rng.uniform(-1, 1, (5, 777)), rng.uniform(-1, 1, (5, 777))
    prg = shared_cache.program(ocl.context, ocl.device, "dot", dtype=dtype)
    out = kcache.ops.dot(ocl.queue, prg, device_array(ocl, x, dtype), device_array(ocl, y, dtype))
    assert out.shape == (5,) and out.dtype == ELEMENT[dtype]
    assert_close(decode(out.get(), dtype), dot_reference(x, y, dtype), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_ops_conv2d_on_arrays(shared_cache, ocl, dtype):
    rng = np.random.default_rng(5)
    x, w, bias = rng.uniform(-1, 1, (2, 3, 7, 6)), rng.uniform(-1, 1, (4, 3, 3, 3)), \
        rng.uniform(-1, 1, 4)
    prg = shared_cache.program(ocl.context, ocl.device, "conv2d", dtype=dtype, act="relu")
    args = [device_array(ocl, a, dtype) for a in (x, w, bias)]
    y = kcache.ops.conv2d(ocl.queue, prg, *args, padding=1)
    assert y.shape == (2, 4, 7, 6)
    assert_close(decode(y.get(), dtype), conv2d_reference(x, w, bias, dtype, relu=True), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_ops_batchnorm_on_buffers(shared_cache, ocl, dtype):
    rng = np.random.default_rng(6)
    x = rng.uniform(-2, 2, (2, 3, 5, 4))
    stats = [rng.uniform(-1, 1, 3), rng.uniform(0.5, 2, 3), rng.uniform(0.5, 1.5, 3),
             rng.uniform(-1, 1, 3)]
    prg = shared_cache.program(ocl.context, ocl.device, "batchnorm", dtype=dtype)
    mf = cl.mem_flags
    bufs = [cl.Buffer(ocl.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
            for a in [encode(x, dtype)] + [np.asarray(s, np.float32) for s in stats]]
    y = np.empty_like(encode(x, dtype))
    out = cl.Buffer(ocl.context, mf.WRITE_ONLY, y.nbytes)
    event = kcache.ops.batchnorm(ocl.queue, prg, *bufs, eps=1e-5, shape=x.shape, out=out)
    assert isinstance(event, cl.Event)
    cl.enqueue_copy(ocl.queue, y, out, wait_for=[event])
    ocl.queue.finish()
    assert_close(decode(y, dtype), batchnorm_reference(x, *stats, 1e-5, dtype), dtype)


def test_ops_refuse_mismatched_programs_and_arrays(shared_cache, ocl):
    dot = shared_cache.program(ocl.context, ocl.device, "dot", dtype="f32")
    conv = shared_cache.program(ocl.context, ocl.device, "conv2d", dtype="f32", act="relu")
    x = cl_array.to_device(ocl.queue, np.ones((2, 8), np.float32))
    with pytest.raises(TypeError, match="needs a dot program, not a conv2d program"):
        kcache.ops.dot(ocl.queue, conv, x, x)
    with pytest.raises(TypeError, match="holds float16, the program's elements are float32"):
        kcache.ops.dot(ocl.queue, dot, x, cl_array.to_device(ocl.queue, np.ones((2, 8), np.float16)))
    with pytest.raises(TypeError, match="must come from kcache.Cache.program"):
        kcache.ops.dot(ocl.queue, cl.Program(ocl.context, "__kernel void k() {}").build(), x, x)
    with pytest.raises(TypeError, match="pass out="):
        kcache.ops.dot(ocl.queue, dot, x.data, x.data, shape=(2, 8))
