"""kcache.Cache: programs for pyopencl (or raw handles) through kcache's ladder."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from . import _handles
from ._errors import InvalidArgument, error_for
from ._kcache import CacheCore, Outcome, ProgramHandle, open_cache

Handle = Any  # a pyopencl.Context / pyopencl.Device, or an int address
_MODES = ("blocking", "fail_fast", "background")


class Binary(bytes):
    """Binary bytes of a program, with ``kcache_outcome`` saying how they came."""

    kcache_outcome: Outcome


def _mode(mode: str) -> str:
    if not isinstance(mode, str):
        raise TypeError(f"mode must be a str, not {type(mode).__qualname__}")
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {', '.join(_MODES)}, not {mode!r}")
    return mode


def _kernel_args(context: Handle, device: Handle, kernel: Any, params: Dict[str, Any]) -> tuple:
    """(context, device, kernel, params) of a registry-kernel request, checked."""
    ctx = _handles.handle(context, "context")
    dev = _handles.handle(device, "device")
    if not isinstance(kernel, str):
        raise TypeError(f"kernel name must be a str, not {type(kernel).__qualname__}")
    values = {k: _handles.param_value(k, v) for k, v in params.items() if v is not None}
    return ctx, dev, kernel, values


def _wrap(handle: ProgramHandle, what: str, variant: Optional[tuple] = None) -> Any:
    """Raises for a failed request; else a pyopencl.Program owning the reference
    (when pyopencl imports), or the ProgramHandle itself. A registry program
    also names its `variant` (kernel, params) for kcache.ops."""
    outcome = handle.kcache_outcome
    if not handle:
        raise error_for(what, outcome)
    cl = _handles.pyopencl()
    if cl is None:
        return handle
    # from_int_ptr(retain=False) takes over the one reference detach() hands out:
    # pyopencl releases it exactly once, and the handle no longer does.
    program = cl.Program.from_int_ptr(handle.detach(), retain=False)
    program.kcache_outcome = outcome
    if variant is not None:
        program.kcache_variant = variant
    return program


class Cache:
    """A kcache cache: the user store, installed packs, failure records and the
    watchdogged JIT, shared by every thread of the process.

    ``Cache()`` resolves the configuration like the C++ API (``KCACHE_*``
    environment variables, then the config file, then defaults). Keyword
    arguments override single values: ``dir`` (store directory), ``packs``
    (pack files or directories), ``jit_timeout`` (default deadline, seconds),
    ``read_only`` and ``max_size`` (bytes). Raises ConfigError or StoreError
    when the cache cannot be opened. Methods are thread-safe and release the
    GIL while they wait. ``close()`` (or ``with``) waits for background compiles.
    """

    def __init__(
        self,
        dir: Union[str, os.PathLike, None] = None,
        packs: Optional[Iterable[Union[str, os.PathLike]]] = None,
        jit_timeout: Optional[float] = None,
        read_only: Optional[bool] = None,
        max_size: Optional[int] = None,
    ) -> None:
        if isinstance(packs, (str, os.PathLike)):
            raise TypeError("packs must be a list of paths, not a single path")
        if read_only is not None and not isinstance(read_only, bool):
            raise TypeError(f"read_only must be a bool, not {type(read_only).__qualname__}")
        if max_size is not None and (isinstance(max_size, bool) or not isinstance(max_size, int)):
            raise TypeError(f"max_size must be an int (bytes), not {type(max_size).__qualname__}")
        if max_size is not None and max_size <= 0:
            raise InvalidArgument(f"max_size must be positive, not {max_size}")
        core, outcome = open_cache(
            os.fspath(dir) if dir is not None else None,
            [os.fspath(p) for p in packs] if packs is not None else None,
            _handles.deadline_ms(jit_timeout),
            read_only,
            max_size,
        )
        if core is None:
            raise error_for("kcache.Cache", outcome)
        self._core: CacheCore = core

    def program(
        self,
        context: Handle,
        device: Handle,
        kernel: str,
        *,
        dtype: Any = None,
        act: Optional[str] = None,
        deadline: Optional[float] = None,
        mode: str = "blocking",
        **params: Any,
    ) -> Any:
        """Returns a built program of registry kernel `kernel` (a name or alias)
        for `device` in `context`.

        Variant parameters: ``dtype`` ("f32", "f16", "bf16" or numpy.float32 /
        numpy.float16), ``act`` ("none", "relu") and any other the kernel has
        (``ls=64``, ``arith="f16"``...); left out, they take their default.
        ``deadline`` (seconds) bounds a compile; None uses the configured
        ``jit_timeout``. ``mode``: "blocking" (compile, shared with concurrent
        callers), "fail_fast" (never compile) or "background" (NotReady now, a
        compile starts for the next call).

        Returns a pyopencl.Program when pyopencl can be imported, else a
        ProgramHandle; either way ``.kcache_outcome`` tells how it was
        answered. Raises a kcache.Error subclass (Timeout, Unsupported,
        UnknownKernel, ...) carrying the outcome when no program comes back.
        """
        args = _kernel_args(context, device, kernel, dict(params, dtype=dtype, act=act))
        h = self._core.program(*args, _handles.deadline_ms(deadline), _mode(mode))
        return _wrap(h, kernel, (kernel, args[3]))

    def program_source(
        self,
        context: Handle,
        device: Handle,
        source: str,
        options: str = "",
        entry_points: Sequence[str] = (),
        *,
        name: str = "",
        warmup_local_size: int = 0,
        deadline: Optional[float] = None,
        mode: str = "blocking",
        kat: Union[str, os.PathLike, None] = None,
        kat_reference: Optional[Callable[[List[List[float]]], Sequence[Any]]] = None,
    ) -> Any:
        """Returns your own kernel `source` built with `options`, through the same
        ladder, store and watchdog as registry kernels.

        ``entry_points`` lists the kernels to keep (empty: all). ``name`` is
        descriptive only (never part of the key). ``warmup_local_size`` > 0
        launches each kernel once before storing (CPU drivers finish code
        generation at first launch). Returns and raises as :meth:`program`;
        BuildError carries the build log in ``.log``.

        ``kat`` names the kernel's known-answer test (a KAT file,
        docs/canary-kat.md), run once per driver on the binary before it is
        served; under ``KCACHE_CANARY=enforce`` a failing test raises
        DriverSuspect, under warn it is logged. ``kat_reference(inputs)``
        computes the expected outputs instead of the file's lists: it gets
        one list of floats per KAT argument and returns one sequence per
        argument, each output's expected values in its place (others are
        ignored). A KAT file that cannot be used, or a reference that raises,
        raises InvalidArgument (chained to the reference's exception).
        """
        ctx = _handles.handle(context, "context")
        dev = _handles.handle(device, "device")
        if not isinstance(source, str):
            raise TypeError(f"source must be a str, not {type(source).__qualname__}")
        if not isinstance(options, str):
            raise TypeError(f"options must be a str, not {type(options).__qualname__}")
        if isinstance(entry_points, str) or not all(isinstance(e, str) for e in entry_points):
            raise TypeError("entry_points must be a sequence of str")
        if kat is not None and not isinstance(kat, (str, os.PathLike)):
            raise TypeError(f"kat must be a path, not {type(kat).__qualname__}")
        if kat_reference is not None and not callable(kat_reference):
            raise TypeError("kat_reference must be callable")
        raised: List[BaseException] = []

        def reference(inputs: List[List[float]]) -> Sequence[Any]:
            try:
                return kat_reference(inputs)  # type: ignore[misc]
            except Exception as e:
                raised.append(e)
                raise

        h = self._core.program_source(
            ctx,
            dev,
            name,
            source,
            options,
            list(entry_points),
            warmup_local_size,
            _handles.deadline_ms(deadline),
            _mode(mode),
            os.fspath(kat) if kat is not None else "",
            reference if kat_reference is not None else None,
        )
        try:
            return _wrap(h, name or "program_source")
        except InvalidArgument as e:
            if raised:
                raise e from raised[0]
            raise

    def binary(
        self,
        context: Handle,
        device: Handle,
        kernel: str,
        *,
        dtype: Any = None,
        act: Optional[str] = None,
        deadline: Optional[float] = None,
        mode: str = "blocking",
        **params: Any,
    ) -> Binary:
        """Returns the device binary of a registry kernel as bytes (a Binary, with
        ``.kcache_outcome``); nothing is built in `context`. Arguments and
        exceptions as :meth:`program`."""
        args = _kernel_args(context, device, kernel, dict(params, dtype=dtype, act=act))
        data, outcome = self._core.binary(*args, _handles.deadline_ms(deadline), _mode(mode))
        if not outcome.ok:
            raise error_for(kernel, outcome)
        result = Binary(data)
        result.kcache_outcome = outcome
        return result

    def stats(self) -> Dict[str, Any]:
        """Returns this process's counters (every row of the C++ API's
        kcache_counters.def: in_process_hits, store_hits, remote_hits,
        jit_compiles, programs_released, ...) plus the store's sizes
        (entries, raw_bytes, ...), and the process's metrics: "latency"
        (histograms "request", "answered" by rung, "compile", "load",
        "remote_get", "remote_put", each {"count", "sum_ns", "buckets"} with
        the bounds in "latency_bounds_ns") and "requests" ({rung: {status: n}})."""
        return self._core.stats()

    def forget(self, context: Handle) -> int:
        """Releases every program this cache keeps for `context` and returns how
        many. Call it before dropping a context for good in a process that
        cycles through contexts; programs you hold stay valid, and a later
        request for `context` builds again (from the store)."""
        return self._core.forget(_handles.handle(context, "context"))

    @property
    def config(self) -> Dict[str, Any]:
        """The effective configuration: values plus ``origins`` (key -> (value,
        where it came from: default, environment, config_file or argument))."""
        return self._core.config()

    def drain(self, limit: float = 60.0) -> None:
        """Waits (at most `limit` seconds) for background compiles started here."""
        ms = _handles.deadline_ms(limit)
        self._core.drain(ms if ms is not None else 0)

    def close(self) -> None:
        """Closes the cache (waiting for its background compiles). Programs
        already returned stay valid; later calls raise ValueError."""
        self._core.close()

    def __enter__(self) -> "Cache":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
