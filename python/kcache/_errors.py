"""kcache's exceptions: one class per failure status, each carrying the outcome."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Optional, Type

if TYPE_CHECKING:
    from ._kcache import Outcome


class Error(Exception):
    """Base of every kcache failure.

    ``outcome`` is the :class:`kcache.Outcome` of the request (status, rung,
    misses, key, timings), or None when the call was refused before it reached
    the cache (a bad argument found in Python). ``status`` is its status name.
    """

    status: str = "internal_error"

    def __init__(self, message: str, outcome: Optional[Outcome] = None) -> None:
        super().__init__(message)
        self.outcome = outcome
        if outcome is not None:
            self.status = outcome.status


class Timeout(Error):
    """The compile did not finish by the deadline (now, or a recorded failure).

    The helper was killed; the caller should use its fallback path. A later
    call answers from the failure record at once until the record expires.
    """

    status = "timeout"


class Crashed(Error):
    """The driver's compiler crashed in the helper process (now, or recorded)."""

    status = "crashed"


class BuildError(Error):
    """The source did not build. ``log`` holds the compiler's build log."""

    status = "build_error"

    @property
    def log(self) -> str:
        """The build log reported by the driver."""
        return self.outcome.message if self.outcome is not None else ""


class Unsupported(Error):
    """The device lacks what the variant needs (e.g. cl_khr_fp16); nothing was compiled."""

    status = "unsupported"


class UnknownKernel(Error, LookupError):
    """No registry kernel or alias has that name."""

    status = "unknown_kernel"


class NotCached(Error):
    """mode='fail_fast' and nothing is stored for the request."""

    status = "not_cached"


class NotReady(Error):
    """mode='background': a compile was started (or ran and failed); ask again."""

    status = "not_ready"


class StoreError(Error):
    """The store could not be opened or written (unsafe or unwritable directory, ...)."""

    status = "store_error"


class ConfigError(Error):
    """A malformed configuration value (KCACHE_* variable or config file line)."""

    status = "config_error"


class InvalidArgument(Error, ValueError):
    """A bad argument: null handle, device not in the context, bad variant parameter."""

    status = "invalid_argument"


class Disabled(Error):
    """KCACHE_DISABLE is set: the caller should build the program itself."""

    status = "disabled"


class DeviceError(Error):
    """An OpenCL call failed."""

    status = "device_error"


_BY_STATUS: Dict[str, Type[Error]] = {
    cls.status: cls
    for cls in (
        Timeout,
        Crashed,
        BuildError,
        Unsupported,
        UnknownKernel,
        NotCached,
        NotReady,
        StoreError,
        ConfigError,
        InvalidArgument,
        Disabled,
        DeviceError,
    )
}


def error_for(what: str, outcome: Outcome) -> Error:
    """Returns the exception for a failed `outcome` of the request named `what`."""
    cls = _BY_STATUS.get(outcome.status, Error)
    text = f"{what}: {outcome.status}"
    if outcome.rung == "failure_record":
        text += " (from the failure record)"
    if outcome.message:
        text += f": {outcome.message}"
    return cls(text, outcome)
