"""Fixtures of the Python tests: a PoCL context through pyopencl, a fresh store
per test, and a private PoCL kernel cache so that PoCL's own cache never
answers for kcache.

Run by ctest with the system Python and PYTHONPATH pointing at the built
package; KCACHE_JIT_PATH names the kcache-jit built alongside.
"""

import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import pyopencl as cl  # noqa: E402

import kcache  # noqa: E402

_POCL_CACHE = ""


def pytest_configure(config):
    # Before any OpenCL use: PoCL (here and in kcache-jit, which inherits the
    # environment) caches in a directory of this session only, and no user
    # store, pack or config file takes part. (Child processes that import this
    # module for ClEnv keep the environment their test gives them.)
    global _POCL_CACHE
    _POCL_CACHE = tempfile.mkdtemp(prefix="kcache-pytest-pocl-")
    os.environ["POCL_CACHE_DIR"] = _POCL_CACHE
    os.environ["KCACHE_DIR"] = os.path.join(_POCL_CACHE, "unused-default-store")
    os.environ.pop("KCACHE_PACKS", None)
    empty_config = os.path.join(_POCL_CACHE, "config")  # a config file must be regular
    open(empty_config, "w").close()
    os.environ["KCACHE_CONFIG"] = empty_config


def pytest_unconfigure(config):
    if _POCL_CACHE:
        shutil.rmtree(_POCL_CACHE, ignore_errors=True)


def platform_name() -> str:
    """The OpenCL platform the tests use: PoCL, or KCACHE_TEST_PLATFORM (a substring)."""
    return os.environ.get("KCACHE_TEST_PLATFORM") or "Portable Computing Language"


class ClEnv:
    """One context, device and in-order queue for the whole session."""

    def __init__(self) -> None:
        wanted = platform_name()
        platforms = [p for p in cl.get_platforms() if wanted in p.name]
        assert platforms, f"no OpenCL platform named {wanted!r}"
        self.device = platforms[0].get_devices()[0]
        self.context = cl.Context([self.device])
        self.queue = cl.CommandQueue(self.context)


@pytest.fixture(scope="session")
def ocl() -> ClEnv:
    return ClEnv()


@pytest.fixture
def store(tmp_path) -> str:
    """A fresh, empty store directory for one test."""
    return str(tmp_path / "store")


@pytest.fixture
def cache(store):
    c = kcache.Cache(dir=store, jit_timeout=120.0)
    yield c
    c.close()


def child_env(store: str) -> dict:
    """Environment for a child Python process that uses the same store."""
    env = dict(os.environ)
    env["KCACHE_DIR"] = store
    return env
