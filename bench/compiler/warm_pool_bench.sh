#!/usr/bin/env bash
# Cold `kcache warm` of every kernel variant, a fresh helper per compile
# (KCACHE_JIT_HELPERS=0, before the pool) against persistent helpers (the
# default), with --jobs 1 and --jobs N; each run in a fresh store and fresh
# driver caches, the four variants interleaved, REPS rounds; medians.
# Usage: bench/compiler/warm_pool_bench.sh KCACHE_BINARY [REPS] [N]   (defaults 3, 2)
set -euo pipefail
kcache="$1"
reps="${2:-3}"
n="${3:-2}"
work="$(mktemp -d "${TMPDIR:-/tmp}/kcache-warm-pool-XXXXXX")"
trap 'rm -rf "$work"' EXIT

now_ms() { date +%s%3N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# Wall milliseconds of one cold warm: $1 helpers setting, $2 jobs, $3 round.
cold_warm() {
  local dir="$work/$1-$2-$3" start end
  mkdir -p "$dir/home"
  start=$(now_ms)
  KCACHE_JIT_HELPERS="$1" KCACHE_DIR="$dir/store" POCL_CACHE_DIR="$dir/pocl" \
    HOME="$dir/home" XDG_CACHE_HOME="$dir/home" \
    "$kcache" warm --jobs "$2" --quiet --json >"$dir/out.json"
  end=$(now_ms)
  if ! grep -q '"failed": 0' "$dir/out.json"; then
    echo "warm failed (helpers=$1 jobs=$2):" >&2; cat "$dir/out.json" >&2; exit 1
  fi
  echo $((end - start))
}

declare -A runs
for r in $(seq "$reps"); do
  for jobs in 1 "$n"; do
    for helpers in 0 4; do
      runs[$helpers-$jobs]+="$(cold_warm "$helpers" "$jobs" "$r") "
    done
  done
done
built=$(sed -n 's/.*"built": \([0-9]*\).*/\1/p' "$work/4-1-1/out.json")
echo "cold warm of all variants ($built built), $reps interleaved rounds, wall ms"
for jobs in 1 "$n"; do
  before=$(printf '%s\n' ${runs[0-$jobs]} | median)
  after=$(printf '%s\n' ${runs[4-$jobs]} | median)
  echo "  --jobs $jobs: fresh helper per compile median $before (${runs[0-$jobs]% })," \
       "pooled median $after (${runs[4-$jobs]% })"
  awk -v a="$before" -v b="$after" -v j="$jobs" \
    'BEGIN {printf "  --jobs %s: pooled / per-compile = %.2fx\n", j, b / a}'
done
