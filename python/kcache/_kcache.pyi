"""Type stubs of the kcache._kcache extension module (the bound C++ API)."""

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

class Outcome:
    """How a request was answered."""

    @property
    def status(self) -> str: ...
    @property
    def ok(self) -> bool: ...
    @property
    def rung(self) -> str: ...
    @property
    def misses(self) -> List[Tuple[str, str, str]]: ...
    @property
    def message(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def total(self) -> float: ...
    @property
    def compile(self) -> float: ...
    @property
    def resident(self) -> bool: ...

class ProgramHandle:
    """A built cl_program with one reference owned by this object."""

    @property
    def int_ptr(self) -> int: ...
    @property
    def kcache_outcome(self) -> Outcome: ...
    def detach(self) -> int: ...
    def __bool__(self) -> bool: ...

class CacheCore:
    def program(
        self,
        context: int,
        device: int,
        kernel: str,
        params: Dict[str, str],
        deadline_ms: Optional[int],
        mode: str,
    ) -> ProgramHandle: ...
    def program_source(
        self,
        context: int,
        device: int,
        name: str,
        source: str,
        options: str,
        entry_points: List[str],
        warmup_local_size: int,
        deadline_ms: Optional[int],
        mode: str,
        kat: str = "",
        kat_reference: Optional[Callable[[List[List[float]]], Sequence[Any]]] = None,
    ) -> ProgramHandle: ...
    def binary(
        self,
        context: int,
        device: int,
        kernel: str,
        params: Dict[str, str],
        deadline_ms: Optional[int],
        mode: str,
    ) -> Tuple[bytes, Outcome]: ...
    def stats(self) -> Dict[str, Any]: ...
    def forget(self, context: int) -> int: ...
    def drain(self, limit_ms: int) -> None: ...
    def config(self) -> Dict[str, Any]: ...
    def close(self) -> None: ...

def open_cache(
    dir: Optional[str],
    packs: Optional[List[str]],
    jit_timeout_ms: Optional[int],
    read_only: Optional[bool],
    max_size: Optional[int],
) -> Tuple[Optional[CacheCore], Outcome]: ...

class LaunchTarget:
    def __init__(self, queue: int, program: int, local_size: int, wait: List[int]) -> None: ...

def variant_info(kernel: str, params: Dict[str, str]) -> Tuple[str, int, str]: ...
def dot_partial_bytes(n: int, rows: int, local_size: int) -> int: ...
def launch_dot(
    target: LaunchTarget, n: int, rows: int, x: int, y: int, partial: int, out: int
) -> Tuple[int, int, str]: ...
def launch_conv2d(
    target: LaunchTarget, shape: List[int], x: int, w: int, bias: int, y: int
) -> Tuple[int, int, str]: ...
def launch_batchnorm(
    target: LaunchTarget, n: int, c: int, hw: int, buffers: List[int], eps: float, training: bool
) -> Tuple[int, int, str]: ...
