"""The driver canary through the Python API, on PoCL under the canary tests'
OpenCL layer (KCACHE_FAULT_LAYER): the layer reports another driver version
and miscompiles dot (its partial sums subtract), so the canary finds the
driver suspect for dot and sound for conv2d. Under enforce dot raises
kcache.DriverSuspect; under warn it is served and the verdict is logged.
"""

import os

import pytest

import kcache

# Before this process's first OpenCL call (the ocl fixture's): the layer is
# read when the loader starts, the faults by it and by every helper kcache starts.
os.environ["OPENCL_LAYERS"] = os.environ["KCACHE_FAULT_LAYER"]
os.environ["KCACHE_FAULT_DRIVER"] = "9.9-python"
os.environ["KCACHE_FAULT_MATCH"] = "dot_partial"
os.environ["KCACHE_FAULT_SOURCE_FROM"] = "acc += KC_PRODUCT"
os.environ["KCACHE_FAULT_SOURCE_TO"] = "acc -= KC_PRODUCT"


def test_the_layer_reports_the_simulated_driver(ocl):
    assert ocl.device.driver_version == "9.9-python"


def test_enforce_raises_driver_suspect_and_serves_the_rest(monkeypatch, store, ocl):
    monkeypatch.setenv("KCACHE_CANARY", "enforce")
    cache = kcache.Cache(dir=store, jit_timeout=120.0)
    try:
        with pytest.raises(kcache.DriverSuspect) as e:
            cache.program(ocl.context, ocl.device, "dot")
        assert e.value.outcome.status == "driver_suspect"
        assert "suspect for dot:" in str(e.value) and "seed" in str(e.value)
        assert "KCACHE_CANARY=enforce" in str(e.value)
        assert isinstance(e.value, kcache.Error)
        conv = cache.program(ocl.context, ocl.device, "conv2d")
        assert conv.kcache_outcome.ok
    finally:
        cache.close()
    assert os.listdir(os.path.join(store, "canary"))  # the verdicts were stored


def test_warn_serves_the_suspect_kernel_and_logs_the_verdict(monkeypatch, capfd, store, ocl):
    monkeypatch.setenv("KCACHE_CANARY", "warn")
    cache = kcache.Cache(dir=store, jit_timeout=120.0)
    dot = cache.program(ocl.context, ocl.device, "dot")
    assert dot.kcache_outcome.ok
    cache.close()  # waits for the gates it ran after the answer, the canary among them
    err = capfd.readouterr().err
    assert "the driver is SUSPECT for dot:" in err
    assert "served anyway (KCACHE_CANARY=warn)" in err
    again = kcache.Cache(dir=store, jit_timeout=120.0)
    try:
        assert again.program(ocl.context, ocl.device, "dot").kcache_outcome.ok
    finally:
        again.close()
    assert "served anyway" not in capfd.readouterr().err  # once per driver and variant


def test_off_runs_no_canary(monkeypatch, store, ocl):
    monkeypatch.setenv("KCACHE_CANARY", "off")
    cache = kcache.Cache(dir=store, jit_timeout=120.0)
    try:
        assert cache.program(ocl.context, ocl.device, "dot").kcache_outcome.ok
    finally:
        cache.close()
    assert not os.path.exists(os.path.join(store, "canary"))
