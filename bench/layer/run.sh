#!/usr/bin/env bash
# bench/layer/run.sh [REPEATS]: the OpenCL layer on real applications, side
# by side in one run, medians of REPEATS runs (default 5). For each
# application found (a pyopencl script, clpeak, a CLBlast tuner), the time
# spent in clBuildProgram:
#   driver        the driver alone, its own cache off (POCL_KERNEL_CACHE=0)
#   driver-cache  the driver alone, second run with its cache on
#   layer-first   under the layer, empty store (the compiles)
#   layer-second  under the layer, second run (store hits)
#   floor         the driver loading the same binaries directly
# Build times come from the layer's trace (one line per build, with its
# milliseconds); the driver-alone runs go through the layer with
# KCACHE_DISABLE=1, where every build is the driver's and only timed.
# Then the enqueue loop (calls the layer does not take), with and without it.
# Runs from the build tree (KCACHE_BUILD_DIR, default build/) or, on the GPU
# machine, with the staged prefix's kcache first in PATH (bench/gpu/run.sh's
# setup): KCACHE_BENCH_CLI and KCACHE_BENCH_APPS name the two programs.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KCACHE_BUILD_DIR:-$root/build}
kcache=${KCACHE_BENCH_CLI:-$build/tools/kcache}
helper=${KCACHE_BENCH_APPS:-$build/bench/layer/layer_bench_apps}
repeats=${1:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Applications write files where they run (CLBlast's tuner its JSON results):
# run them in the temporary directory, never in the caller's.
kcache=$(realpath -m "$kcache") helper=$(realpath -m "$helper")
cd "$work"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Total milliseconds of the layer's build lines in the file $1.
build_ms() { awk '/^kcache layer: (HIT|JIT|FAIL|PASS) / { for (i = 1; i < NF; i++) if ($(i + 1) == "ms") s += $i } END { printf "%.2f\n", s }' "$1"; }
builds() { grep -cE '^kcache layer: (HIT|JIT|FAIL|PASS) ' "$1"; }

# run_app NAME STORE POCL_CACHE(0|1) EXTRA_ENV... -- : one run under the layer; prints build ms.
run_app() {
  local name=$1 store=$2 pocl=$3; shift 3
  env KCACHE_DIR="$store" POCL_KERNEL_CACHE="$pocl" POCL_CACHE_DIR="$work/$name/pocl" \
      KCACHE_TRACE=1 PYOPENCL_NO_CACHE=1 "$@" "$kcache" run -- "${app[@]}" \
      >"$work/$name/out" 2>"$work/$name/err" || { echo "nan"; return; }
  build_ms "$work/$name/err"
}

bench_app() {
  local name=$1; shift
  app=("$@")
  command -v "${app[0]}" >/dev/null || { printf '%-10s not installed: skipped\n' "$name"; return; }
  mkdir -p "$work/$name"
  local s="$work/$name/store" d c f l floor n i
  d=$(for i in $(seq "$repeats"); do run_app "$name" "$work/$name/none" 0 KCACHE_DISABLE=1; done | median)
  n=$(builds "$work/$name/err")
  run_app "$name" "$work/$name/none" 1 KCACHE_DISABLE=1 >/dev/null  # fills PoCL's cache
  c=$(for i in $(seq "$repeats"); do run_app "$name" "$work/$name/none" 1 KCACHE_DISABLE=1; done | median)
  rm -rf "$work/$name/pocl"
  f=$(run_app "$name" "$s" 0)
  l=$(for i in $(seq "$repeats"); do run_app "$name" "$s" 0; done | median)
  mkdir -p "$work/$name/bin"
  KCACHE_DIR="$s" "$kcache" ls --json | python3 -c 'import json,sys; print("\n".join(e["key"] for e in json.load(sys.stdin)))' |
    while read -r key; do KCACHE_DIR="$s" "$kcache" get "$key" --output "$work/$name/bin/$key"; done
  # PoCL's cache off here too, as in the layer's runs: with it on, PoCL
  # answers the load from the code it generated in an earlier run.
  floor=$(for i in $(seq "$repeats"); do POCL_KERNEL_CACHE=0 "$helper" load "$work/$name"/bin/* | awk '{ print $2 }'; done | median)
  printf '%-10s %6s %10s %12s %11s %12s %9s %14s %16s\n' "$name" "$n" "$d" "$c" "$f" "$l" "$floor" \
    "$(awk -v a="$l" -v b="$floor" 'BEGIN { printf "%.2fx", a / b }')" \
    "$(awk -v a="$c" -v b="$l" 'BEGIN { printf "%.1fx", a / b }')"
}

echo "program-build time per run, ms (medians of $repeats; $(date -u +%F), $(uname -n))"
printf '%-10s %6s %10s %12s %11s %12s %9s %14s %16s\n' app builds driver driver-cache layer-first \
  layer-second floor second/floor driver-cache/second
bench_app pyopencl /usr/bin/python3 "$root/tests/layer/pyopencl_app.py"
bench_app clpeak clpeak --kernel-latency
bench_app clblast clblast_tuner_xdot -runs 1 -n 4096

# The enqueue loop: 200000 enqueues, alternating without and with the layer.
loops=${KCACHE_BENCH_ENQUEUES:-200000}
for i in $(seq "$repeats"); do
  KCACHE_DIR="$work/enq" "$helper" enqueue "$loops" | awk '{ print "driver", $2 }'
  KCACHE_DIR="$work/enq" "$kcache" run -- "$helper" enqueue "$loops" | awk '{ print "layer", $2 }'
done >"$work/enqueue"
without=$(awk '$1 == "driver" { print $2 }' "$work/enqueue" | median)
with=$(awk '$1 == "layer" { print $2 }' "$work/enqueue" | median)
awk -v a="$with" -v b="$without" -v n="$loops" \
  'BEGIN { printf "enqueue loop (%d enqueues): driver %.1f ms, layer %.1f ms, overhead %+.1f%%\n", n, b, a, (a / b - 1) * 100 }'
