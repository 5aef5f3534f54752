"""Bad requests of every kind raise the right exception with a clear message,
and each failure carries its outcome."""

import pytest

import kcache


def test_unknown_kernel(cache, ocl):
    with pytest.raises(kcache.UnknownKernel) as e:
        cache.program(ocl.context, ocl.device, "conv3d", dtype="f32")
    assert "conv3d" in str(e.value)
    assert e.value.outcome.status == "unknown_kernel"
    assert isinstance(e.value, LookupError) and isinstance(e.value, kcache.Error)


def test_bad_parameter_value_and_name(cache, ocl):
    with pytest.raises(kcache.InvalidArgument) as e:
        cache.program(ocl.context, ocl.device, "dot", dtype="f64")
    assert "f64" in str(e.value) and e.value.outcome.status == "invalid_argument"
    with pytest.raises(kcache.InvalidArgument) as e:
        cache.program(ocl.context, ocl.device, "dot", colour="red")
    assert "colour" in str(e.value)
    assert isinstance(e.value, ValueError)


def test_none_and_null_handles(cache, ocl):
    with pytest.raises(kcache.InvalidArgument, match="context is None"):
        cache.program(None, ocl.device, "dot")
    with pytest.raises(kcache.InvalidArgument, match="device is None"):
        cache.program(ocl.context, None, "dot")
    with pytest.raises(kcache.InvalidArgument) as e:
        cache.program(0, ocl.device.int_ptr, "dot")
    assert "null" in str(e.value) and e.value.outcome.status == "invalid_argument"


def test_wrong_types(cache, ocl):
    with pytest.raises(TypeError, match="context must be a pyopencl.Context or an int handle"):
        cache.program("ctx", ocl.device, "dot")
    with pytest.raises(TypeError, match="not pyopencl._cl.Device"):
        cache.program(ocl.device, ocl.device, "dot")  # a device is no context
    with pytest.raises(TypeError, match="device must be a pyopencl.Device"):
        cache.program(ocl.context, ocl.context, "dot")
    with pytest.raises(TypeError, match="kernel name must be a str"):
        cache.program(ocl.context, ocl.device, 42)
    with pytest.raises(TypeError, match="dtype= must be a str"):
        cache.program(ocl.context, ocl.device, "dot", dtype=3.5)
    with pytest.raises(TypeError, match="deadline must be a number"):
        cache.program(ocl.context, ocl.device, "dot", deadline="soon")
    with pytest.raises(TypeError, match="source must be a str"):
        cache.program_source(ocl.context, ocl.device, b"__kernel void k() {}")
    with pytest.raises(TypeError, match="entry_points must be a sequence of str"):
        cache.program_source(ocl.context, ocl.device, "__kernel void k() {}", "", "k")


def test_bad_values(cache, ocl):
    with pytest.raises(ValueError, match="mode must be one of"):
        cache.program(ocl.context, ocl.device, "dot", mode="sometimes")
    with pytest.raises(kcache.InvalidArgument, match="deadline must be >= 0"):
        cache.program(ocl.context, ocl.device, "dot", deadline=-1)
    with pytest.raises(kcache.InvalidArgument, match="empty kernel source"):
        cache.program_source(ocl.context, ocl.device, "")


def test_build_error_carries_the_log(cache, ocl):
    with pytest.raises(kcache.BuildError) as e:
        cache.program_source(ocl.context, ocl.device,
                             "__kernel void k(__global float* a) { a[0] = undeclared_name; }",
                             name="broken")
    assert "undeclared_name" in e.value.log
    assert str(e.value).startswith("broken: build_error")


def test_unsupported_variant(cache, ocl):
    if "cl_khr_fp16" in ocl.device.extensions:
        pytest.fail("this test needs a device without cl_khr_fp16 (PoCL here has none)")
    with pytest.raises(kcache.Unsupported) as e:
        cache.program(ocl.context, ocl.device, "dot", dtype="f16", arith="f16")
    assert "cl_khr_fp16" in str(e.value)
    assert cache.stats()["jit_compiles"] == 0  # nothing was compiled


def test_fail_fast_and_background_modes(cache, ocl):
    with pytest.raises(kcache.NotCached) as e:
        cache.program(ocl.context, ocl.device, "dot", dtype="bf16", mode="fail_fast")
    assert e.value.outcome.status == "not_cached"
    with pytest.raises(kcache.NotReady):
        cache.program(ocl.context, ocl.device, "batchnorm", dtype="bf16", mode="background")
    cache.drain(300.0)
    later = cache.program(ocl.context, ocl.device, "batchnorm", dtype="bf16", mode="fail_fast")
    assert later.kcache_outcome.ok


def test_store_error_for_an_unusable_directory(tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(kcache.StoreError) as e:
        kcache.Cache(dir=str(not_a_dir))
    assert str(not_a_dir) in str(e.value)
    assert e.value.outcome.status == "store_error"


def test_config_error_names_the_variable(monkeypatch, store):
    monkeypatch.setenv("KCACHE_MAX_SIZE", "lots")
    with pytest.raises(kcache.ConfigError, match="KCACHE_MAX_SIZE"):
        kcache.Cache(dir=store)


def test_constructor_argument_types(store):
    with pytest.raises(TypeError, match="packs must be a list"):
        kcache.Cache(dir=store, packs="/some/pack.kcpack")
    with pytest.raises(TypeError, match="read_only must be a bool"):
        kcache.Cache(dir=store, read_only="yes")
    with pytest.raises(kcache.InvalidArgument, match="max_size must be positive"):
        kcache.Cache(dir=store, max_size=0)


def test_a_closed_cache_refuses_calls(store, ocl):
    c = kcache.Cache(dir=store)
    c.close()
    with pytest.raises(ValueError, match="closed"):
        c.program(ocl.context, ocl.device, "dot")
    c.close()  # closing twice is harmless


def test_disabled_cache_tells_the_caller_to_build_itself(monkeypatch, store, ocl):
    monkeypatch.setenv("KCACHE_DISABLE", "1")
    with kcache.Cache(dir=store) as c:
        with pytest.raises(kcache.Disabled):
            c.program(ocl.context, ocl.device, "dot")
