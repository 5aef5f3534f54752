"""The process's metrics through stats(): latency histograms and requests by
rung and status, next to the cache's own counters."""


def test_stats_carry_the_latency_histograms(cache, ocl):
    before = cache.stats()
    cache.program(ocl.context, ocl.device, "dot", dtype="f32")
    cache.program(ocl.context, ocl.device, "dot", dtype="f32")
    s = cache.stats()
    assert len(s["latency_bounds_ns"]) == 27
    assert s["latency_bounds_ns"][0] == 250
    request = s["latency"]["request"]
    assert request["count"] - before["latency"]["request"]["count"] == 2
    assert sum(request["buckets"]) == request["count"]
    assert len(request["buckets"]) == 28
    answered = s["latency"]["answered"]
    assert answered["in_process"]["count"] - before["latency"]["answered"]["in_process"]["count"] == 1
    assert s["latency"]["compile"]["count"] >= 1
    assert s["latency"]["compile"]["sum_ns"] > 0
    assert s["requests"]["jit"]["ok"] >= 1
