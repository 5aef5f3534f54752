#!/usr/bin/env bash
# bench/layer/run.sh [REPEATS]: the OpenCL layer on real applications, side
# by side in one run, medians of REPEATS runs (default 5). For each
# application found (a pyopencl script, clpeak, a CLBlast tuner), the time
# spent in clBuildProgram, ms per run:
#   driver         the driver alone, its own cache off
#   driver-cache   the driver alone, second run, its own cache warm
#   layer-first    under the layer, empty store (the compiles)
#   layer-second   under the layer, second run (store hits), the driver's
#                  cache warm as in driver-cache (what a user has: PoCL's and
#                  NVIDIA's caches are on by default)
#   floor          the driver loading the same binaries directly, same cache
#   read+flr       the same with the files read first
#   own            kcache's own part of layer-2nd: its build time less the
#                  driver's loads inside it, both from the layer's lines of
#                  the same runs (each answered build's line names its load)
#   own-tr         the same from the library's trace spans, in runs of their
#                  own (KCACHE_TRACE=FILE): the trace's own work (the
#                  request's JSON, each new source's text) included
#   base-2nd, base-own, base-tr     the same with another layer library,
#                  when KCACHE_BENCH_BASE_LAYER names one (an installed copy
#                  of an earlier build: old and new side by side in one run;
#                  it loads the libkcache beside it); "-" otherwise (and
#                  base-own "-" for a layer whose lines name no load)
#   2nd-cold, flr-cold     layer-second and floor with the driver's cache
#                  off and its directory empty (PoCL then unpacks each
#                  binary's files into it and syncs each one)
# The second-run columns are taken in turn within each repeat, so that the
# noise of a shared machine falls on all of them alike. Build times come
# from the layer's trace (one line per build, its milliseconds; the first
# build of a process includes opening the cache); the driver-alone runs go
# through the layer with KCACHE_DISABLE=1, where every build is the
# driver's and only timed. "The driver's cache" is PoCL's kernel cache
# (POCL_KERNEL_CACHE, POCL_CACHE_DIR) and NVIDIA's ComputeCache
# (CUDA_CACHE_DISABLE, CUDA_CACHE_PATH): both are set, each driver reads its own.
# Then calls the layer does not take (the enqueue loop, and the ns per call
# of clSetKernelArg), with and without it (below).
# Runs from the build tree (KCACHE_BUILD_DIR, default build/) or, on the GPU
# machine, through bench/layer/run_gpu.sh: KCACHE_BENCH_CLI and
# KCACHE_BENCH_APPS name the two programs.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KCACHE_BUILD_DIR:-$root/build}
kcache=${KCACHE_BENCH_CLI:-$build/tools/kcache}
helper=${KCACHE_BENCH_APPS:-$build/bench/layer/layer_bench_apps}
repeats=${1:-5}
base_layer=${KCACHE_BENCH_BASE_LAYER:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Applications write files where they run (CLBlast's tuner its JSON results):
# run them in the temporary directory, never in the caller's.
kcache=$(realpath -m "$kcache") helper=$(realpath -m "$helper")
cd "$work"
# A platform without devices (Mesa's Clover on a machine without a GPU it
# drives, rusticl with RUSTICL_ENABLE unset) makes clpeak exit: unless the
# caller chose the ICDs, the applications see those of the system's list
# whose platform has a device.
if [ -z "${OCL_ICD_VENDORS:-}${OCL_ICD_FILENAMES:-}" ] && [ -d /etc/OpenCL/vendors ]; then
  mkdir "$work/icd"
  for f in /etc/OpenCL/vendors/*.icd; do
    if OCL_ICD_VENDORS=$f "$helper" devices 2>/dev/null | grep -q '^  device: '; then ln -s "$f" "$work/icd/"; fi
  done
  export OCL_ICD_VENDORS=$work/icd
fi

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Total milliseconds of the layer's build lines in the file $1.
build_ms() { awk '/^kcache layer: (HIT|JIT|FAIL|PASS) / { for (i = 1; i < NF; i++) if ($(i + 1) == "ms") s += $i } END { printf "%.2f\n", s }' "$1"; }
# kcache's own part of the answered builds in the file $1, from the layer's
# lines alone (no trace spans): their milliseconds less the driver's load
# each names ("(load MS)"); "-" when none does (an earlier layer).
own_of_lines() {
  awk '/^kcache layer: (HIT|JIT) .*\(load [0-9.]+\)$/ {
         for (i = 1; i < NF; i++) if ($(i + 1) == "ms") s += $i
         match($0, /\(load [0-9.]+\)/); l += substr($0, RSTART + 6, RLENGTH - 7); n++ }
       END { if (n) printf "%.2f\n", s - l; else print "-" }' "$1"
}
builds() { grep -cE '^kcache layer: (HIT|JIT|FAIL|PASS) ' "$1"; }
ratio() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { if (b > 0) printf f, a / b; else print "nan" }'; }

# cache_env on|off DIR: the driver's own cache, on (in DIR) or off.
cache_env() {
  local on=$([ "$1" = on ] && echo 1 || echo 0) off=$([ "$1" = on ] && echo 0 || echo 1)
  echo "POCL_KERNEL_CACHE=$on POCL_CACHE_DIR=$2/pocl CUDA_CACHE_DISABLE=$off CUDA_CACHE_PATH=$2/nv"
}

# run_app NAME STORE CACHE(on|off) CACHE_DIR EXTRA_ENV...: one run under the
# layer; prints its build ms.
run_app() {
  local name=$1 store=$2 cache=$3 dir=$4; shift 4
  # shellcheck disable=SC2046
  env KCACHE_DIR="$store" $(cache_env "$cache" "$dir") KCACHE_TRACE=1 PYOPENCL_NO_CACHE=1 \
      "$@" "$kcache" run -- "${app[@]}" >"$work/$name/out" 2>"$work/$name/err" || { echo "nan"; return; }
  build_ms "$work/$name/err"
}

# floor NAME CACHE(on|off) CACHE_DIR: the stored binaries loaded directly,
# each on its own device with its build options; prints "LOAD_MS READ_LOAD_MS".
floor() {
  # shellcheck disable=SC2046
  env $(cache_env "$2" "$3") "$helper" load "$work/$1/bin.list" | awk '{ print $2, $4 }'
}

# own NAME STORE CACHE_DIR EXTRA_ENV...: kcache's own part of one warm
# second run, ms: the layer's build time less the driver's loads inside it
# (the library's trace spans, KCACHE_TRACE=FILE), so the driver's noise
# cancels out.
own() {
  local name=$1 store=$2 dir=$3 t="$work/$1/trace.json" ms
  shift 3
  rm -f "$t"
  ms=$(run_app "$name" "$store" on "$dir" KCACHE_TRACE="$t" "$@")
  python3 - "$t" "$ms" "$work/$name/err" "$work/$name/steps" "$*" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read().rstrip().rstrip(",")
events = json.loads(text if text.endswith("]") else text + "]")
spans = [e for e in events if e.get("ph") == "X"]
loads = sum(e.get("dur", 0) for e in spans if e.get("name") == "load")
print("%.2f" % (float(sys.argv[2]) - loads / 1000.0))
# Each answered build's steps, µs, in order: the spans of one request
# follow its "request" span in the trace, and the layer's lines are in the
# same order (each line's ms is the whole clBuildProgram).
lines = [float(m.group(1)) * 1000 for m in (re.match(r"kcache layer: (?:HIT|JIT) \S+ \S+ ([0-9.]+) ms",
         l) for l in open(sys.argv[3])) if m]
builds, cur = [], None
for e in spans:
    if e["name"] == "request":
        cur = {"request": e["dur"]}
        builds.append(cur)
    elif cur is not None:
        cur[e["name"]] = cur.get(e["name"], 0) + e["dur"]
lookup = ("in_process", "plan", "canary gate", "errata gate", "in_process by key", "resident")
arm = "base" if "KCACHE_LAYER_PATH=" in sys.argv[5] else "this"
out = open(sys.argv[4], "a")
for i, (b, whole) in enumerate(zip(builds, lines)):
    stored = b.get("stored", 0)
    seen = sum(b.get(k, 0) for k in lookup)
    parts = {"lookup": seen, "read": b.get("tier read", 0),
             "stored-rest": stored - b.get("tier read", 0) - b.get("load", 0),
             "request-rest": b["request"] - seen - stored, "layer+tr": whole - b["request"],
             "load": b.get("load", 0)}
    print(arm, "first" if i == 0 else "later", json.dumps(parts), file=out)
PY
}

bench_app() {
  local name=$1; shift
  app=("$@")
  command -v "${app[0]}" >/dev/null || { printf '%-10s not installed: skipped\n' "$name"; return; }
  mkdir -p "$work/$name"
  local s="$work/$name/store" none="$work/$name/none" dd="$work/$name/driver" ld="$work/$name/layer"
  local cold="$work/$name/cold"
  local d n c f i
  d=$(for i in $(seq "$repeats"); do run_app "$name" "$none" off "$dd" KCACHE_DISABLE=1; done | median)
  n=$(builds "$work/$name/err")
  run_app "$name" "$none" on "$dd" KCACHE_DISABLE=1 >/dev/null  # fills the driver's cache
  f=$(run_app "$name" "$s" on "$ld")                             # fills the store and ld
  # The stored binaries, each listed with the platform, device and build
  # options it was made for (an application may build for every platform).
  mkdir -p "$work/$name/bin"
  KCACHE_DIR="$s" "$kcache" ls --json | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    f = e["fields"]
    print("\t".join([f["platform_name"], f["device_name"], f["build_options"], sys.argv[1] + "/" + e["key"]]))
' "$work/$name/bin" >"$work/$name/bin.list"
  cut -f4 "$work/$name/bin.list" | while read -r file; do
    KCACHE_DIR="$s" "$kcache" get "$(basename "$file")" --output "$file"
  done
  floor "$name" on "$ld" >/dev/null  # the first load of these binaries with the cache on
  for i in $(seq "$repeats"); do
    echo "c $(run_app "$name" "$none" on "$dd" KCACHE_DISABLE=1)"
    echo "l $(run_app "$name" "$s" on "$ld") $(own_of_lines "$work/$name/err")"
    if [ -n "$base_layer" ]; then
      echo "b $(run_app "$name" "$s" on "$ld" KCACHE_LAYER_PATH="$base_layer") $(own_of_lines "$work/$name/err")"
    fi
    echo "f $(floor "$name" on "$ld")"
    rm -rf "$cold" && echo "L $(run_app "$name" "$s" off "$cold")"
    rm -rf "$cold" && echo "F $(floor "$name" off "$cold")"
    echo "o $(own "$name" "$s" "$ld")"
    if [ -n "$base_layer" ]; then echo "O $(own "$name" "$s" "$ld" KCACHE_LAYER_PATH="$base_layer")"; fi
  done >"$work/$name/second"
  col() { awk -v k="$1" -v f="$2" '$1 == k { print $f }' "$work/$name/second" | median; }
  local c l b fl rf L F o O u U
  c=$(col c 2) l=$(col l 2) fl=$(col f 2) rf=$(col f 3) L=$(col L 2) F=$(col F 2) o=$(col o 2)
  b=$( [ -n "$base_layer" ] && col b 2 || echo -) O=$( [ -n "$base_layer" ] && col O 2 || echo -)
  u=$(col l 3) U=$( [ -n "$base_layer" ] && col b 3 || echo -)
  [ "$u" = nan ] && u=-
  [ "$U" = nan ] && U=-
  printf '%-9s %6s %8s %8s %9s %8s %8s %8s %8s %6s %8s %6s %8s %8s %8s  %7s %7s %7s %7s %7s\n' "$name" "$n" \
    "$d" "$c" "$f" "$l" "$b" "$fl" "$rf" "$u" "$U" "$o" "$O" "$L" "$F" "$(ratio "$l" "$fl" %.2fx)" \
    "$(ratio "$c" "$l" %.1fx)" "$(ratio "$L" "$F" %.2fx)" "$(ratio "$c" "$L" %.1fx)" \
    "$( [ "$b" = - ] && echo - || ratio "$b" "$fl" %.2fx)"
}

echo "program-build time per run, ms (medians of $repeats; $(date -u +%F), $(uname -n))"
printf '%-9s %6s %8s %8s %9s %8s %8s %8s %8s %6s %8s %6s %8s %8s %8s  %7s %7s %7s %7s %7s\n' app builds \
  driver drv-cache layer-1st layer-2nd base-2nd floor read+flr own base-own own-tr base-tr 2nd-cold flr-cold \
  2nd/flr cache/2nd cold/flr cache/cold base/flr
# The system's Python first (Debian's pyopencl and numpy are for it).
python=$(for p in /usr/bin/python3 python3; do
  "$p" -c 'import pyopencl, numpy' 2>/dev/null && { command -v "$p"; break; }
done)
if [ -n "$python" ]; then
  bench_app pyopencl "$python" "$root/tests/layer/pyopencl_app.py"
else
  printf '%-9s pyopencl or numpy not importable: skipped\n' pyopencl
fi
bench_app clpeak clpeak --kernel-latency
bench_app clblast clblast_tuner_xdot -runs 1 -n 4096

# Where kcache's own part goes, from the own-tr runs' spans: per answered
# build, µs, the first build of a process apart from the later ones
# (medians over all such builds of all repeats): the layer outside the
# cache's request with the trace's writing of the request ("layer+tr": the
# difference of own-tr and own is mostly this), the lookups before the stored rung (the
# in-process and resident lookups, the plan, the gates), the hot copy's
# read with its checksum and tag, the rest of the stored rung (its vouch
# record, handing the program back), the request's own bookkeeping, and
# the driver's load beside them.
for name in pyopencl clpeak clblast; do
  [ -s "$work/$name/steps" ] || continue
  python3 - "$work/$name/steps" "$name" <<'PY'
import json, statistics as st, sys
rows = {}
for line in open(sys.argv[1]):
    arm, which, parts = line.split(" ", 2)
    rows.setdefault((arm, which), []).append(json.loads(parts))
steps = ("layer+tr", "lookup", "read", "stored-rest", "request-rest", "load")
for (arm, which), got in sorted(rows.items(), key=lambda kv: (kv[0][0] != "this", kv[0][1])):
    cells = " ".join("%s %.0f" % (k, st.median(r[k] for r in got)) for k in steps)
    print("steps, us a build: %-9s %-4s %-5s (%3d builds) %s" % (sys.argv[2], arm, which, len(got), cells))
PY
done

# Calls the layer does not take. Two figures, each from rotations (one
# process of each arm in turn: the driver alone, the layer, the layer with
# KCACHE_DISABLE=1), PoCL held to one worker thread in every arm
# (POCL_MAX_PTHREAD_COUNT=1: less spread on a 2-core machine), the arms'
# order turned by one at each rotation:
# - the enqueue loop: short runs of enqueues of one kernel (a finish every
#   64), free to use both CPUs and again pinned to one (taskset: the host
#   thread and PoCL's worker then hand over on one CPU, with less spread);
#   the median of the per-rotation ratios to the driver's run, and the
#   ratio of the arms' minimums (this VM's spread between processes is
#   larger than 2 %: the next figure is the one that resolves it);
# - the ns per call of clSetKernelArg (best of five rounds of 10^6 calls in
#   each process), the layer's difference to the driver's (median of the
#   per-rotation differences, and the difference of the arms' minimums),
#   then that difference times the loop's calls per enqueue (2 + 1/64) over
#   one enqueue's time in the driver's runs: what the layer adds to the loop,
#   free of the loop's own spread.
loops=${KCACHE_BENCH_ENQUEUES:-50000}
call_loops=${KCACHE_BENCH_CALLS:-1000000}
rotations=${KCACHE_BENCH_ENQUEUE_REPEATS:-$((repeats < 7 ? 21 : 3 * repeats))}
export POCL_MAX_PTHREAD_COUNT=1
# Pinned: the process on one CPU (taskset), its worker thread with it.
pin=()
if command -v taskset >/dev/null; then pin=(taskset -c 0); fi
# arm NAME MODE N [pinned]: one process of the arm, prints "NAME VALUE".
arm() {
  local p=()
  if [ "${4:-}" = pinned ]; then p=("${pin[@]}"); fi
  case $1 in
    driver) "${p[@]}" "$helper" "$2" "$3" ;;
    layer) KCACHE_DIR="$work/enq" "${p[@]}" "$kcache" run -- "$helper" "$2" "$3" ;;
    off) KCACHE_DIR="$work/enq" KCACHE_DISABLE=1 "${p[@]}" "$kcache" run -- "$helper" "$2" "$3" ;;
  esac | awk -v k="$1" '{ print k, $2 }'
}
arm layer enqueue 1000 >/dev/null  # the kernel's program into the store
arms=(driver layer off)
for i in $(seq "$rotations"); do
  # Each rotation starts with the next arm, so that no arm always runs first.
  order=("${arms[@]:i%3}" "${arms[@]:0:i%3}")
  for a in "${order[@]}"; do echo "$i $(arm "$a" enqueue "$loops")"; done
  if [ ${#pin[@]} -gt 0 ]; then
    for a in "${order[@]}"; do echo "$i $(arm "$a" enqueue "$loops" pinned | sed 's/^/p/')"; done
  fi
  for a in "${order[@]}"; do echo "$i $(arm "$a" calls "$call_loops" | sed 's/^/n/')"; done
done >"$work/enqueue"
python3 - "$work/enqueue" "$loops" "$rotations" <<'PY'
import statistics as st, sys
runs = {}
for line in open(sys.argv[1]):
    i, arm, value = line.split()
    runs.setdefault(arm, {})[i] = float(value)
loops, rotations = int(sys.argv[2]), int(sys.argv[3])
for how, k in (("two CPUs", ""), ("pinned to one CPU", "p")):
    if k + "driver" not in runs:
        continue
    d, l, o = runs[k + "driver"], runs[k + "layer"], runs[k + "off"]
    ratio = lambda arm: (st.median(arm[i] / d[i] for i in d if i in arm) - 1) * 100
    low = lambda arm: (min(arm.values()) / min(d.values()) - 1) * 100
    print("enqueue loop, %s (%d enqueues, %d rotations; PoCL 1 thread): driver %.1f ms "
          "(median), layer %+.1f%%, layer with kcache off %+.1f%% (medians of per-rotation "
          "ratios; minimums %+.1f%%, %+.1f%%)"
          % (how, loops, rotations, st.median(d.values()), ratio(l), ratio(o), low(l), low(o)))
if "ndriver" not in runs:
    sys.exit("clSetKernelArg: no figure (layer_bench_apps has no 'calls' mode: an older build?)")
d = runs["driver"]
nd, nl, no = runs["ndriver"], runs["nlayer"], runs["noff"]
per_enqueue_ns = st.median(d.values()) * 1e6 / loops
calls = 2 + 1 / 64
for name, arm in (("layer", nl), ("layer with kcache off", no)):
    diff = st.median(arm[i] - nd[i] for i in nd if i in arm)
    low = min(arm.values()) - min(nd.values())
    print("clSetKernelArg: driver %.2f ns a call (min %.2f), %s %+.2f ns (median of differences; "
          "minimums %+.2f): %+.2f%% of one enqueue (%.0f ns, two CPUs; %.4g calls each)"
          % (st.median(nd.values()), min(nd.values()), name, diff, low,
             diff * calls / per_enqueue_ns * 100, per_enqueue_ns, calls))
PY
