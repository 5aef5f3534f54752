"""kcache for Python: ready OpenCL programs through kcache's lookup ladder.

    import pyopencl as cl, kcache
    ctx = cl.create_some_context()
    cache = kcache.Cache()                      # KCACHE_* environment, config file, defaults
    prg = cache.program(ctx, ctx.devices[0], "conv2d", dtype="f16", act="relu", deadline=2.0)
    prg.kcache_outcome.rung                     # 'jit', 'user_store', 'in_process', ...

Failures raise kcache.Error subclasses (Timeout, Crashed, BuildError,
Unsupported, UnknownKernel, NotCached, NotReady, StoreError, ConfigError,
InvalidArgument, Disabled, DeviceError, DriverSuspect), each carrying ``.outcome``.
Without pyopencl, pass int handles and get ProgramHandle objects back.
``kcache.ops`` (imported on first use; needs pyopencl and numpy) launches
the registry kernels on pyopencl arrays: ``kcache.ops.dot(queue, prg, x, y)``.
"""

from typing import Any

from ._cache import Binary, Cache
from ._errors import (
    BuildError,
    ConfigError,
    Crashed,
    DeviceError,
    Disabled,
    DriverSuspect,
    Error,
    InvalidArgument,
    NotCached,
    NotReady,
    StoreError,
    Timeout,
    UnknownKernel,
    Unsupported,
)
from ._kcache import Outcome, ProgramHandle

__all__ = [
    "Binary",
    "BuildError",
    "Cache",
    "ConfigError",
    "Crashed",
    "DeviceError",
    "Disabled",
    "DriverSuspect",
    "Error",
    "InvalidArgument",
    "NotCached",
    "NotReady",
    "Outcome",
    "ProgramHandle",
    "StoreError",
    "Timeout",
    "UnknownKernel",
    "Unsupported",
]


def __getattr__(name: str) -> Any:
    # kcache.ops imports pyopencl and numpy: only when it is used.
    if name == "ops":
        import importlib

        return importlib.import_module(".ops", __name__)
    raise AttributeError(f"module 'kcache' has no attribute {name!r}")
