#!/usr/bin/env bash
# Section 1b (`gpu_bench hit-parts`) of two or more gpu_bench builds side by
# side on this machine: the builds run in turn, ROUNDS times each (default
# 5), and the medians over rounds of each column are printed per build and
# kernel (µs). For instance the commit before a change, built in a worktree
# with this tree's bench/gpu sources, against this tree:
#
#   GPU_BENCH_ANY_DEVICE=1 GPU_BENCH_EVICT_MB=64 ROUNDS=5 \
#     bench/gpu/ab_parts.sh /tmp/old/build/bench/gpu/gpu_bench build/bench/gpu/gpu_bench
#
# On a CPU device (PoCL), GPU_BENCH_EVICT_MB=64 writes 64 MiB after each
# context is made, as a GPU driver's context creation leaves the CPU's
# caches; without it kcache's code stays warm and its cost does not show.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: [ROUNDS=n] $0 GPU_BENCH_A GPU_BENCH_B [GPU_BENCH_C ...]" >&2; exit 2; }
rounds=${ROUNDS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export KCACHE_CANARY=${KCACHE_CANARY:-off}
for ((i = 0; i < rounds; ++i)); do
  arm=0
  for bin in "$@"; do
    arm=$((arm + 1))
    "$bin" hit-parts "$work/$arm" > "$work/out"
    if grep -q WRONG "$work/out"; then
      echo "$bin: a hit came from the wrong rung or failed:" >&2
      cat "$work/out" >&2
      exit 1
    fi
    awk -v arm="$arm" 'NF == 9 && $2 ~ /^[0-9.]+$/ { print arm, $0 }' "$work/out" >> "$work/rows"
  done
done
python3 - "$work/rows" "$@" <<'EOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
cols = ["floor", "resident", "floor+calls", "warmed", "before", "driver", "after", "own"]
print("%-4s %-16s" % ("arm", "kernel") + "".join("%12s" % c for c in cols))
for n, path in enumerate(sys.argv[2:]):
    arm = str(n + 1)
    kernels = [r[1] for r in rows if r[0] == arm]
    for k in dict.fromkeys(kernels):
        mine = [r for r in rows if r[0] == arm and r[1] == k]
        med = [statistics.median(float(r[2 + i]) for r in mine) for i in range(len(cols))]
        print("%-4s %-16s" % (arm, k) + "".join("%12.1f" % v for v in med))
    print("     (%s: %s, %d rounds)" % (arm, path, len(mine)))
print("own, median over every kernel and round: " + ", ".join(
    "%d: %.1f" % (n + 1, statistics.median(float(r[9]) for r in rows if r[0] == str(n + 1)))
    for n in range(len(sys.argv) - 2)))
EOF
