#!/usr/bin/env python3
"""Reads cache_bench's JSON output (--benchmark_out) and prints the medians and
the issue-5 ratios as Markdown tables (see README.md here).

    bench/cache/ratios.py results.json
"""
import json
import sys

KERNELS = ["dot", "conv2d", "batchnorm", "qconv_pointwise"]
SCALE_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def medians(path):
    with open(path) as f:
        doc = json.load(f)
    out = {}
    for b in doc["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        base, arg = b["run_name"].split("/")[:2]
        row = {k: v for k, v in b.items() if isinstance(v, (int, float))}
        row["ms"] = b["real_time"] * SCALE_MS[b["time_unit"]]
        row["cpu_ms"] = b["cpu_time"] * SCALE_MS[b["time_unit"]]
        out[(base, KERNELS[int(arg)])] = row
    return doc["context"], out


def main():
    context, m = medians(sys.argv[1])
    print(f"date {context.get('date')}, load average at start {context.get('load_avg')}\n")

    def ms(name, k, field="ms"):
        return m[(name, k)][field]

    print("| kernel | floor | store hit | hit ÷ floor (separate) | paired: hit ÷ floor "
          "(wall / CPU) | paired CPU: floor, hit, Store::get | paired: Store::get wall | "
          "fresh Cache hit |")
    print("|---|---|---|---|---|---|---|---|")
    for k in KERNELS:
        p = m[("BM_StoreHitVsFloor", k)]
        print(f"| {k} | {ms('BM_DriverFloor', k):.3f} ms | {ms('BM_StoreHit', k):.3f} ms | "
              f"{ms('BM_StoreHit', k) / ms('BM_DriverFloor', k):.3f}× | "
              f"{p['ratio']:.3f}× / {p['cpu_ratio']:.3f}× | "
              f"{p['floor_cpu_ms']:.3f}, {p['hit_cpu_ms']:.3f}, {p['get_cpu_ms']:.3f} ms | "
              f"{p['get_ms']:.3f} ms | "
              f"{ms('BM_StoreHitFreshCache', k):.3f} ms |")
    print()
    print("| kernel | in-process hit: wall | CPU | memo lower bound: wall | CPU |")
    print("|---|---|---|---|---|")
    for k in KERNELS:
        print(f"| {k} | {ms('BM_InProcessHit', k) * 1e3:.1f} µs | "
              f"{ms('BM_InProcessHit', k, 'cpu_ms') * 1e3:.1f} µs | "
              f"{ms('BM_InProcessMemoBound', k) * 1e3:.3f} µs | "
              f"{ms('BM_InProcessMemoBound', k, 'cpu_ms') * 1e3:.3f} µs |")
    print()
    print("| kernel | cold JIT + first launch | of which helper | first launch | "
          "cold ÷ store hit | cold ÷ (store hit + one first launch) |")
    print("|---|---|---|---|---|---|")
    for k in KERNELS:
        c = m[("BM_ColdJit", k)]
        hit = ms("BM_StoreHit", k)
        print(f"| {k} | {c['ms']:.0f} ms | {c['helper_ms']:.0f} ms | {c['launch_ms']:.2f} ms | "
              f"{c['ms'] / hit:.0f}× | {c['ms'] / (hit + c['launch_ms']):.0f}× |")
    print()
    second = "second_in_child_us"

    def pair(name, k):
        r = m[(name, k)]
        return f"{r['ms']:.1f} / {r[second] / 1e3:.2f} ms"

    print("| kernel | PoCL cache hit (first / next build) | floor, warm PoCL dir | "
          "kcache hit, warm PoCL dir | **PoCL ÷ kcache, warm PoCL dir (first)** | "
          "PoCL ÷ kcache (next) |")
    print("|---|---|---|---|---|---|")
    for k in KERNELS:
        pc, kw = m[("BM_PoclCacheChild", k)], m[("BM_KcacheHitChildWarmPoclDir", k)]
        print(f"| {k} | {pair('BM_PoclCacheChild', k)} | {pair('BM_FloorChildWarmPoclDir', k)} | "
              f"{pair('BM_KcacheHitChildWarmPoclDir', k)} | {pc['ms'] / kw['ms']:.1f}× | "
              f"{pc[second] / kw[second]:.0f}× |")
    print()
    print("| kernel | floor, empty PoCL dir | kcache hit, empty PoCL dir | the same after PoCL "
          "loaded another binary | PoCL ÷ kcache, empty PoCL dir (first) |")
    print("|---|---|---|---|---|")
    for k in KERNELS:
        pc, kc = m[("BM_PoclCacheChild", k)], m[("BM_KcacheHitChild", k)]
        print(f"| {k} | {pair('BM_FloorChild', k)} | {pair('BM_KcacheHitChild', k)} | "
              f"{pair('BM_KcacheHitChildPoclWarm', k)} | {pc['ms'] / kc['ms']:.1f}× |")
    print()
    print("| step (median) | " + " | ".join(KERNELS) + " |")
    print("|---|" + "---|" * len(KERNELS))
    for step in ["BM_StepRender", "BM_StepSourceDigest", "BM_StepKey", "BM_StepStoreGet",
                 "BM_StepZstdDecodeVerify", "BM_StepChecksum"]:
        cells = []
        for k in KERNELS:
            r = m[(step, k)]
            cells.append(f"{r['ms'] * 1e3:.1f} µs (CPU {r['cpu_ms'] * 1e3:.1f})")
        print(f"| {step[7:]} | " + " | ".join(cells) + " |")
    for step in ["BM_StepDeviceChecks", "BM_StepProbe"]:
        r = m[(step, "dot")]
        print(f"| {step[7:]} (per device) | {r['ms'] * 1e3:.2f} µs (CPU {r['cpu_ms'] * 1e3:.2f}) |"
              + " |" * (len(KERNELS) - 1))


if __name__ == "__main__":
    main()
