"""dot, conv2d and batchnorm in f32/f16/bf16: kcache's programs run through
pyopencl on PoCL and compared with numpy references."""

import numpy as np
import pyopencl as cl
import pytest

import kcache
from kernel_runs import (
    LOCAL_SIZE,
    assert_close,
    batchnorm_reference,
    conv2d_reference,
    dot_reference,
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
