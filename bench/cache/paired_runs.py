#!/usr/bin/env python3
"""Prints, for several cache_bench JSON outputs (--benchmark_out) of the same
build or of builds to compare, the paired store-hit benchmark's medians run by
run: hit ÷ floor on process CPU, Store::get's CPU in situ (between PoCL
builds) and, when the run has it, BM_StepStoreGet (hot caches). Used for the
codec comparison in README.md ("Codec").

    bench/cache/paired_runs.py LABEL=a.json,b.json LABEL2=c.json ...
"""
import statistics
import sys

from ratios import KERNELS, medians  # this directory's table printer


def paired(path):
    _, m = medians(path)
    out = {}
    for k in KERNELS:
        p = m[("BM_StoreHitVsFloor", k)]
        out[k] = {"ratio": p["cpu_ratio"], "get_us": p["get_cpu_ms"] * 1e3}
        if ("BM_StepStoreGet", k) in m:
            out[k]["hot_us"] = m[("BM_StepStoreGet", k)]["cpu_ms"] * 1e3
    return out


def main():
    if len(sys.argv) < 2 or any("=" not in a for a in sys.argv[1:]):
        sys.exit(__doc__)
    print("| build | kernel | hit ÷ floor (CPU), run by run | median | Store::get in situ (µs) | "
          "Store::get hot (µs) |")
    print("|---|---|---|---|---|---|")
    for arg in sys.argv[1:]:
        label, files = arg.split("=", 1)
        runs = [paired(p) for p in files.split(",")]
        for k in KERNELS:
            ratios = [r[k]["ratio"] for r in runs]
            gets = [f"{r[k]['get_us']:.0f}" for r in runs]
            hot = [f"{r[k]['hot_us']:.0f}" for r in runs if "hot_us" in r[k]]
            print(f"| {label} | {k} | {' '.join(f'{x:.3f}' for x in ratios)} | "
                  f"**{statistics.median(ratios):.3f}** | {' '.join(gets)} | "
                  f"{' '.join(hot) or '—'} |")


if __name__ == "__main__":
    main()
