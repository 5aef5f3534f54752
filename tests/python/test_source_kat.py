"""A source request's own known-answer test through the Python API, on PoCL:
``kat=`` runs the example operator library's test (examples/kat/) on the
binary before it is served; a wrong expected value raises DriverSuspect under
enforce; ``kat_reference=`` computes the expected outputs in Python; a KAT
file that cannot be used, or a reference that raises, raises InvalidArgument.
"""

import json
import os

import pytest

import kcache

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "kat")


def example(name: str) -> str:
    with open(os.path.join(EXAMPLE, name)) as f:
        return f.read()


def write_kat(tmp_path, kat: dict, name: str = "saxpy.kat.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(kat))
    return str(path)


def saxpy(inputs):
    a, x, y = inputs[0][0], inputs[1], inputs[2]
    return [None, None, [a * xi + yi for xi, yi in zip(x, y)], None]


@pytest.fixture
def enforced(monkeypatch, store):
    monkeypatch.setenv("KCACHE_CANARY", "enforce")
    cache = kcache.Cache(dir=store, jit_timeout=120.0)
    yield cache
    cache.close()


def program(cache, ocl, **kat):
    return cache.program_source(ocl.context, ocl.device, example("saxpy.cl"), name="my_saxpy", **kat)


def test_a_passing_test_serves_and_keeps_its_verdict(enforced, store, ocl, tmp_path):
    kat = write_kat(tmp_path, json.loads(example("saxpy.kat.json")))
    assert program(enforced, ocl, kat=kat).kcache_outcome.ok
    assert os.listdir(os.path.join(store, "canary", "kat"))


def test_a_wrong_answer_raises_driver_suspect(enforced, ocl, tmp_path):
    wrong = json.loads(example("saxpy.kat.json"))
    wrong["args"][2]["expected"][5] += 1
    with pytest.raises(kcache.DriverSuspect) as e:
        program(enforced, ocl, kat=write_kat(tmp_path, wrong))
    assert "result: args[2][5]: got" in str(e.value)


def test_the_reference_computes_the_expected_outputs(enforced, ocl, tmp_path):
    kat = json.loads(example("saxpy.kat.json"))
    kat["args"][2]["expected"] = "reference"
    path = write_kat(tmp_path, kat)
    calls = []

    def reference(inputs):
        calls.append(len(inputs))
        return saxpy(inputs)

    assert program(enforced, ocl, kat=path, kat_reference=reference).kcache_outcome.ok
    assert calls == [4]

    def wrong(inputs):
        out = saxpy(inputs)
        out[2][7] += 0.5
        return out

    # A verdict is per binary and KAT file: another file is another test.
    kat["tolerance"]["rel"] = 2e-6
    other = write_kat(tmp_path, kat, "other.kat.json")
    with pytest.raises(kcache.DriverSuspect):
        program(enforced, ocl, kat=other, kat_reference=wrong)


def test_a_reference_that_raises_is_invalid_argument(enforced, ocl, tmp_path):
    kat = json.loads(example("saxpy.kat.json"))
    kat["args"][2]["expected"] = "reference"

    def broken(inputs):
        raise ZeroDivisionError("no reference today")

    with pytest.raises(kcache.InvalidArgument) as e:
        program(enforced, ocl, kat=write_kat(tmp_path, kat), kat_reference=broken)
    assert isinstance(e.value.__cause__, ZeroDivisionError)


def test_a_missing_kat_file_is_invalid_argument(enforced, ocl, tmp_path):
    with pytest.raises(kcache.InvalidArgument) as e:
        program(enforced, ocl, kat=tmp_path / "none.kat.json")
    assert "none.kat.json" in str(e.value)
    with pytest.raises(TypeError):
        program(enforced, ocl, kat=3)
