"""A kcache.Cache opened before os.fork(): multiprocessing's fork workers use
it as a fresh process would, each compiling (or hitting) on its own, and the
parent's cache goes on working. Every wait has a deadline: a hang fails."""

import multiprocessing
import uuid

SOURCE = """
__kernel void scale(__global float* a, float f) {
    a[get_global_id(0)] *= f;
}
"""

# Set before the fork; the workers inherit them (fork copies the process).
_INHERITED = {}


def _build_in_worker(tag: str) -> tuple:
    cache, ocl = _INHERITED["cache"], _INHERITED["ocl"]
    program = cache.program_source(ocl.context, ocl.device, SOURCE + f"// {tag}\n",
                                   entry_points=["scale"])
    # No kernel runs here: the driver's worker threads are the parent's.
    return program.kcache_outcome.rung, program.scale.num_args, cache.stats()["jit_compiles"]


def test_fork_workers_use_a_cache_opened_before_the_fork(cache, ocl):
    stored = f"stored-{uuid.uuid4()}"
    first = cache.program_source(ocl.context, ocl.device, SOURCE + f"// {stored}\n",
                                 entry_points=["scale"])
    assert first.kcache_outcome.rung == "jit"  # the parent's helper is alive now
    cache.drain(30.0)  # stored before the fork
    _INHERITED.update(cache=cache, ocl=ocl)
    fresh = [f"fresh-{uuid.uuid4()}" for _ in range(3)]
    pool = multiprocessing.get_context("fork").Pool(2)
    try:
        asked = [pool.apply_async(_build_in_worker, (t,)) for t in [stored] + fresh]
        answers = [a.get(timeout=120) for a in asked]
    finally:
        pool.terminate()
        pool.join()
    assert answers[0][0] == "user_store"
    assert [a[0] for a in answers[1:]] == ["jit"] * 3
    assert all(a[1] == 2 for a in answers)
    # The parent's cache is its own still: its program is in its process.
    again = cache.program_source(ocl.context, ocl.device, SOURCE + f"// {stored}\n",
                                 entry_points=["scale"])
    assert again.kcache_outcome.rung == "in_process"
    assert cache.stats()["jit_compiles"] == 1
