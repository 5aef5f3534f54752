"""A caller kernel that PoCL compiles for minutes: the watchdog's Timeout within
the deadline (plus a margin), the failure record answering the next call at
once, and the GIL free for other threads while the compile is waited on."""

import threading
import time

import pytest

import kcache

DEADLINE = 1.5  # seconds
MARGIN = 0.5  # the bound asserted on top of the deadline


def nested_macro_source(levels: int) -> str:
    """A kernel of 2**levels dependent multiply-adds spelled through nested
    macros: tiny source text, a huge straight-line body. At 17 levels PoCL
    here builds it for well over 30 s (measured with pyopencl, killed at 30 s)."""
    lines = ["#define L0(x) x = x * 1.0001f + 0.5f;"]
    lines += [f"#define L{i}(x) L{i - 1}(x) L{i - 1}(x)" for i in range(1, levels + 1)]
    lines.append("__kernel void slow(__global float* a) {")
    lines.append(f"    float x = a[get_global_id(0)]; L{levels}(x) a[get_global_id(0)] = x;")
    lines.append("}")
    return "\n".join(lines) + "\n"


SLOW = nested_macro_source(17)


def test_slow_kernel_times_out_then_fails_fast_from_the_record(cache, ocl):
    start = time.monotonic()
    with pytest.raises(kcache.Timeout) as first:
        cache.program_source(ocl.context, ocl.device, SLOW, entry_points=["slow"],
                             name="slow", deadline=DEADLINE)
    elapsed = time.monotonic() - start
    assert elapsed < DEADLINE + MARGIN, f"Timeout after {elapsed:.3f} s"
    assert first.value.outcome.status == "timeout"
    assert first.value.outcome.rung == "jit"
    assert "slow" in str(first.value)

    start = time.monotonic()
    with pytest.raises(kcache.Timeout) as again:
        cache.program_source(ocl.context, ocl.device, SLOW, entry_points=["slow"],
                             name="slow", deadline=DEADLINE)
    elapsed = time.monotonic() - start
    assert again.value.outcome.rung == "failure_record"
    assert again.value.outcome.key == first.value.outcome.key
    assert "failure record" in str(again.value)
    assert elapsed < MARGIN, f"the failure record answered after {elapsed:.3f} s"
    assert cache.stats()["failure_hits"] == 1


def test_other_threads_run_while_a_compile_is_waited_on(cache, ocl):
    errors = []

    def compile_slowly():
        try:
            cache.program_source(ocl.context, ocl.device, SLOW + "// other key\n",
                                 entry_points=["slow"], deadline=1.0)
        except kcache.Timeout as e:
            errors.append(e)

    worker = threading.Thread(target=compile_slowly)
    worker.start()
    ticks = 0
    while worker.is_alive():
        ticks += 1  # only runs while the worker does not hold the GIL
        time.sleep(0.005)
    worker.join()
    assert len(errors) == 1
    assert ticks >= 50, f"the main thread ran only {ticks} times in a 1 s compile"
