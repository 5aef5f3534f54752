"""examples/python/conv2d_f16.py: the device path and the numpy fallback agree,
and the fallback is taken when kcache reports a timeout."""

import os
import subprocess
import sys

import numpy as np
import pyopencl as cl
import pytest

import kcache
from conftest import child_env

EXAMPLES = os.environ.get("KCACHE_EXAMPLES_DIR") or os.path.join(
    os.path.dirname(__file__), "..", "..", "examples", "python")
sys.path.insert(0, EXAMPLES)

from conv2d_f16 import Conv2dF16  # noqa: E402


@pytest.fixture(scope="module")
def inputs():
    rng = np.random.default_rng(7)
    return rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((4, 3, 3, 3)), \
        rng.standard_normal(4)


def test_device_and_numpy_paths_agree(tmp_path, ocl, inputs):
    queue = cl.CommandQueue(ocl.context)
    with kcache.Cache(dir=str(tmp_path / "ok"), jit_timeout=300.0) as cache:
        on_device = Conv2dF16(queue, cache, act="relu", deadline=300.0)
    assert on_device.path == "device", on_device.fallback_reason
    # A deadline of 0 leaves no time to compile: kcache reports a timeout.
    with kcache.Cache(dir=str(tmp_path / "late")) as cache:
        on_cpu = Conv2dF16(queue, cache, act="relu", deadline=0.0)
    assert on_cpu.path == "numpy"
    assert "timeout" in on_cpu.fallback_reason
    a, b = on_device(*inputs), on_cpu(*inputs)
    assert a.dtype == np.float16 and a.shape == (2, 4, 6, 5)
    assert (b == 0).any() and (b > 0).any()
    np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32), rtol=2e-3, atol=4e-3)


def test_the_script_runs(tmp_path):
    env = child_env(str(tmp_path / "store"))
    env["PYOPENCL_CTX"] = "0"
    done = subprocess.run([sys.executable, os.path.join(EXAMPLES, "conv2d_f16.py"), "300"], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("conv2d f16 on device (kcache rung: jit)"), done.stdout
