"""OpenCL handles in and out: pyopencl objects or raw int addresses."""

from __future__ import annotations

import math
import threading
from types import ModuleType
from typing import Any, Optional, Union

from ._errors import InvalidArgument

_lock = threading.Lock()
_pyopencl: Optional[ModuleType] = None
_pyopencl_tried = False


def pyopencl() -> Optional[ModuleType]:
    """Returns the pyopencl module, or None when it cannot be imported (tried once)."""
    global _pyopencl, _pyopencl_tried
    with _lock:
        if not _pyopencl_tried:
            _pyopencl_tried = True
            try:
                import pyopencl as cl

                _pyopencl = cl
            except ImportError:
                _pyopencl = None
        return _pyopencl


def _describe(value: Any) -> str:
    return "None" if value is None else f"{type(value).__module__}.{type(value).__qualname__}"


def handle(value: Any, what: str) -> int:
    """Returns the address of a cl_context (`what` = "context") or cl_device_id.

    Accepts the matching pyopencl object or a non-negative int. None is a null
    handle (InvalidArgument); anything else, including the other pyopencl
    type, is a TypeError: passing a device as a context would reach the
    driver as a wrong handle.
    """
    if value is None:
        raise InvalidArgument(
            f"{what} is None: pass a pyopencl.{what.capitalize()} or a cl_{what} address as an int"
        )
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise InvalidArgument(f"{what} handle {value} is negative")
        return value
    cl = pyopencl()
    wanted = None
    if cl is not None:
        wanted = cl.Context if what == "context" else cl.Device
        if isinstance(value, wanted):
            return int(value.int_ptr)
    expected = "pyopencl.Context" if what == "context" else "pyopencl.Device"
    raise TypeError(f"{what} must be a {expected} or an int handle, not {_describe(value)}")


def deadline_ms(deadline: Union[float, int, None]) -> Optional[int]:
    """Returns `deadline` (seconds) in whole milliseconds, rounded up; None stays None."""
    if deadline is None:
        return None
    if isinstance(deadline, bool) or not isinstance(deadline, (int, float)):
        raise TypeError(f"deadline must be a number of seconds or None, not {_describe(deadline)}")
    if math.isnan(deadline) or deadline < 0:
        raise InvalidArgument(f"deadline must be >= 0 seconds, not {deadline}")
    if math.isinf(deadline):
        raise InvalidArgument("deadline must be finite (None means the configured default)")
    return int(math.ceil(deadline * 1000.0))


_DTYPE_NAMES = {"float32": "f32", "float16": "f16"}


def param_value(name: str, value: Any) -> str:
    """Returns a variant parameter value as the registry spells it.

    Strings pass through; ints (local sizes) become their decimal text; for
    `dtype`, numpy float32/float16 types become "f32"/"f16".
    """
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if name == "dtype":
        try:
            import numpy

            dt = numpy.dtype(value)
        except (ImportError, TypeError):
            dt = None
        if dt is not None and dt.name in _DTYPE_NAMES:
            return _DTYPE_NAMES[dt.name]
    raise TypeError(f"parameter {name}= must be a str, not {_describe(value)}")
