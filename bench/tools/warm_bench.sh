#!/usr/bin/env bash
# Benchmarks of `kcache warm` on PoCL (see README.md for the figures):
#  1. throughput: a cold warm of a subset with --jobs 2 vs --jobs 1, each run
#     in a fresh store and a fresh PoCL kernel cache (so nothing is reused);
#  2. no-op warm over every kernel variant (everything cached) vs the bare
#     process floor: `kcache devices --probe-child` (process start + OpenCL
#     platform initialisation + device query, nothing else) and `clinfo -l`.
# Usage: bench/tools/warm_bench.sh [BUILD_DIR] [REPS]   (defaults: build, 5)
set -euo pipefail
build="${1:-build}"
reps="${2:-5}"
kcache="$(cd "$build/tools" && pwd)/kcache"
work="$(mktemp -d "${TMPDIR:-/tmp}/kcache-warm-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
subset=(--kernels dot,conv2d --dtypes f32)

now_ms() { date +%s%3N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# Wall milliseconds of one cold warm of the subset with `--jobs $1`.
cold_warm() {
  local dir="$work/cold-$1-$2"
  local start end
  start=$(now_ms)
  KCACHE_DIR="$dir/store" POCL_CACHE_DIR="$dir/pocl" "$kcache" warm "${subset[@]}" \
    --jobs "$1" --quiet >/dev/null
  end=$(now_ms)
  echo $((end - start))
}

# Wall milliseconds of `$@` run 20 times, per run.
per_run() {
  local start end
  start=$(now_ms)
  for _ in $(seq 20); do "$@" >/dev/null 2>&1; done
  end=$(now_ms)
  echo $(((end - start) / 20))
}

items=$(KCACHE_DIR="$work/count" POCL_CACHE_DIR="$work/count-pocl" "$kcache" warm "${subset[@]}" \
  --json --quiet | sed -n 's/.*"built": \([0-9]*\).*/\1/p')
echo "throughput: cold warm of ${subset[*]} ($items variants), $reps runs each, interleaved"
j1=(); j2=()
for r in $(seq "$reps"); do
  j1+=("$(cold_warm 1 "$r")")
  j2+=("$(cold_warm 2 "$r")")
done
m1=$(printf '%s\n' "${j1[@]}" | median)
m2=$(printf '%s\n' "${j2[@]}" | median)
echo "  --jobs 1: median ${m1} ms   (runs: ${j1[*]})"
echo "  --jobs 2: median ${m2} ms   (runs: ${j2[*]})"
awk -v a="$m1" -v b="$m2" 'BEGIN {printf "  throughput ratio jobs2/jobs1: %.2fx\n", a / b}'

echo "no-op warm over all variants vs the process floor ($reps x 20 runs each, interleaved)"
export KCACHE_DIR="$work/full/store" POCL_CACHE_DIR="$work/full/pocl"
"$kcache" warm --jobs 2 --quiet
noop=(); floor=(); clinfo_t=()
for r in $(seq "$reps"); do
  noop+=("$(per_run "$kcache" warm --quiet)")
  floor+=("$(per_run "$kcache" devices --probe-child)")
  clinfo_t+=("$(per_run clinfo -l)")
done
mn=$(printf '%s\n' "${noop[@]}" | median)
mf=$(printf '%s\n' "${floor[@]}" | median)
mc=$(printf '%s\n' "${clinfo_t[@]}" | median)
echo "  no-op warm:              median ${mn} ms   (${noop[*]})"
echo "  floor (--probe-child):   median ${mf} ms   (${floor[*]})"
echo "  clinfo -l:               median ${mc} ms   (${clinfo_t[*]})"
awk -v a="$mn" -v b="$mf" 'BEGIN {printf "  no-op warm / floor: %.2fx\n", a / b}'
