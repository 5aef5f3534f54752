#!/usr/bin/env python3
"""The first hit of a fresh process, two builds side by side.

    first_hit_ab.py OLD_GPU_BENCH NEW_GPU_BENCH ROUNDS STORE [KERNELS]

Each round runs, per kernel and in an order that rotates from round to
round, three fresh processes: `gpu_bench child-first-hit` of each build
(Cache::open + the first Cache::program, which must come from the user
store) and the old build's `child-first-floor` (clCreateProgramWithBinary +
clBuildProgram of the same bytes). STORE is a store that section 3 of
`gpu_bench long-lived ROOT` seeded (ROOT/long-lived, with its KERNEL.bin
files and the canary's record); on PoCL set GPU_BENCH_ANY_DEVICE=1 and a
POCL_CACHE_DIR of its own. Prints per kernel the medians (µs) of the floor,
each build's hit and open, and the medians of the paired differences within
a round: old − floor, new − floor and new − old.
"""
import os
import statistics
import subprocess
import sys


def child(args):
    out = subprocess.run(args, env=os.environ, capture_output=True, text=True)
    return [float(x) for x in out.stdout.split()] if out.returncode == 0 else None


def main():
    old, new, rounds, store = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    kernels = sys.argv[5].split(",") if len(sys.argv) > 5 else [
        "dot", "conv2d", "batchnorm", "qconv_pointwise"]
    got = {k: {"old": [], "new": [], "floor": [], "old_open": [], "new_open": []} for k in kernels}
    for r in range(rounds):
        for k in kernels:
            arms = [("old", [old, "child-first-hit", k, store]),
                    ("new", [new, "child-first-hit", k, store]),
                    ("floor", [old, "child-first-floor", k, os.path.join(store, k + ".bin")])]
            arms = arms[r % 3:] + arms[:r % 3]
            times = {name: child(args) for name, args in arms}
            if any(t is None for t in times.values()):
                print("round %d, %s: a child failed" % (r, k), file=sys.stderr)
                continue
            for name in ("old", "new", "floor"):
                got[k][name].append(times[name][0])
            got[k]["old_open"].append(times["old"][1])
            got[k]["new_open"].append(times["new"][1])
    med = statistics.median
    print("%-16s %8s %8s %8s %8s %8s %9s %9s %9s" % (
        "kernel", "floor", "old", "new", "old open", "new open", "old-floor", "new-floor", "new-old"))
    for k in kernels:
        d = got[k]
        if not d["floor"]:
            continue
        pair = lambda a, b: med([x - y for x, y in zip(d[a], d[b])])
        print("%-16s %8.1f %8.1f %8.1f %8.1f %8.1f %+9.1f %+9.1f %+9.1f  (%d rounds)" % (
            k, med(d["floor"]), med(d["old"]), med(d["new"]), med(d["old_open"]),
            med(d["new_open"]), pair("old", "floor"), pair("new", "floor"), pair("new", "old"),
            len(d["floor"])))


if __name__ == "__main__":
    main()
