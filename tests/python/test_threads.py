"""Eight Python threads asking for one key share one compile."""

import threading
import uuid

import pyopencl as cl

SOURCE = """
__kernel void scale(__global float* a, float f) {
    a[get_global_id(0)] *= f;
}
"""


def test_eight_threads_one_key_one_compile(cache, ocl):
    # A comment no store has seen: the key is new, so a compile must run.
    source = SOURCE + f"// {uuid.uuid4()}\n"
    gate = threading.Barrier(8)
    results, errors = [], []

    def ask():
        try:
            gate.wait()
            results.append(cache.program_source(ocl.context, ocl.device, source,
                                                entry_points=["scale"]))
        except Exception as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(results) == 8
    assert all(isinstance(p, cl.Program) for p in results)
    assert len({p.kcache_outcome.key for p in results}) == 1
    assert cache.stats()["jit_compiles"] == 1
    assert sum(p.kcache_outcome.rung == "jit" for p in results) >= 1
    # Every thread got a usable program of its own.
    for p in results:
        assert p.scale.num_args == 2
