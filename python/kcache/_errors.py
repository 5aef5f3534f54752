"""kcache's exceptions: one class per failure status, each carrying the outcome."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Type

if TYPE_CHECKING:
    from ._kcache import Outcome


class Error(Exception):
    """Base of every kcache failure.

    ``outcome`` is the :class:`kcache.Outcome` of the request (status, rung,
    misses, key, timings), or None when the call was refused before it reached
    the cache (a bad argument found in Python). ``status`` is its status name.
    """

    status: str = "internal_error"

    def __init_subclass__(cls, status: Optional[str] = None, **kwargs: Any) -> None:
        """``class X(Error, status="name")`` makes X the exception of that
        failure status (error_for); a subclass without one only inherits."""
        super().__init_subclass__(**kwargs)
        if status is not None:
            if status in _BY_STATUS:
                raise TypeError(f"{_BY_STATUS[status].__name__} is already the {status} exception")
            cls.status = status
            _BY_STATUS[status] = cls

    def __init__(self, message: str, outcome: Optional[Outcome] = None) -> None:
        super().__init__(message)
        self.outcome = outcome
        if outcome is not None:
            self.status = outcome.status


# The exception class of each failure status, filled as the classes below are defined.
_BY_STATUS: Dict[str, Type[Error]] = {}


class Timeout(Error, status="timeout"):
    """The compile did not finish by the deadline (now, or a recorded failure).

    The helper was killed; the caller should use its fallback path. A later
    call answers from the failure record at once until the record expires.
    """


class Crashed(Error, status="crashed"):
    """The driver's compiler crashed in the helper process (now, or recorded)."""


class BuildError(Error, status="build_error"):
    """The source did not build. ``log`` holds the compiler's build log."""

    @property
    def log(self) -> str:
        """The build log reported by the driver."""
        return self.outcome.message if self.outcome is not None else ""


class Unsupported(Error, status="unsupported"):
    """The device lacks what the variant needs (e.g. cl_khr_fp16); nothing was compiled."""


class UnknownKernel(Error, LookupError, status="unknown_kernel"):
    """No registry kernel or alias has that name."""


class NotCached(Error, status="not_cached"):
    """mode='fail_fast' and nothing is stored for the request."""


class NotReady(Error, status="not_ready"):
    """mode='background': a compile was started (or ran and failed); ask again."""


class StoreError(Error, status="store_error"):
    """The store could not be opened or written (unsafe or unwritable directory, ...)."""


class ConfigError(Error, status="config_error"):
    """A malformed configuration value (KCACHE_* variable or config file line)."""


class InvalidArgument(Error, ValueError, status="invalid_argument"):
    """A bad argument: null handle, device not in the context, bad variant parameter."""


class Disabled(Error, status="disabled"):
    """KCACHE_DISABLE is set: the caller should build the program itself."""


class DeviceError(Error, status="device_error"):
    """An OpenCL call failed."""


class DriverSuspect(Error, status="driver_suspect"):
    """KCACHE_CANARY=enforce and the driver canary (or an erratum) found this
    driver computing wrong answers for the kernel: use the fallback path. The
    message names the failing check, the inputs' seed and the largest error."""


def error_for(what: str, outcome: Outcome) -> Error:
    """Returns the exception for a failed `outcome` of the request named `what`."""
    cls = _BY_STATUS.get(outcome.status, Error)
    text = f"{what}: {outcome.status}"
    if outcome.rung == "failure_record":
        text += " (from the failure record)"
    if outcome.message:
        text += f": {outcome.message}"
    return cls(text, outcome)
