#!/usr/bin/env bash
# bench/layer/hashcat.sh [REPEATS]: hashcat's second run with and without
# the layer, wall seconds per run, medians of REPEATS (default 3). The job
# cracks the MD5 of a three-letter word with a ?l?l?l mask on PoCL's CPU
# device (-D 1); hashcat's own kernel cache ($XDG_CACHE_HOME/hashcat) is
# emptied before every run but the last column's, and PoCL's is off
# (POCL_KERNEL_CACHE=0), so each run builds its three programs:
#   driver        without the layer: the driver compiles them
#   layer-2nd     under the layer, its store warm: kcache answers them
#   hashcat-own   without the layer, hashcat's own cache warm: it loads
#                 the binaries it wrote (what hashcat does for itself)
# The columns are taken in turn within each repeat (paired), so that the
# noise of a shared machine falls on all of them alike.
set -euo pipefail
repeats=${1:-3}
build=${KCACHE_BUILD_DIR:-build}
cli=$(realpath "$build/tools/kcache")
layer=$(realpath "$build/layer/libkcache-layer.so")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME=$work XDG_CACHE_HOME=$work/xdg XDG_DATA_HOME=$work/data KCACHE_DIR=$work/store \
    KCACHE_LAYER_PATH=$layer POCL_KERNEL_CACHE=0 POCL_CACHE_DIR=$work/pocl \
    OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd
job=(hashcat -m 0 -a 3 -D 1 --potfile-disable --backend-ignore-cuda --backend-ignore-hip
    --hwmon-disable --self-test-disable --quiet -o "$work/found" --outfile-format=2
    "$(printf abc | md5sum | cut -d' ' -f1)" '?l?l?l')

# Seconds of one run of the job, after emptying hashcat's cache unless $1 is keep.
timed() {
    local keep=$1
    shift
    [ "$keep" = keep ] || rm -rf "$XDG_CACHE_HOME/hashcat"
    rm -f "$work/found"
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    grep -qx abc "$work/found" || { echo "hashcat did not crack the word" >&2; exit 1; }
    echo "$end - $start" | bc
}

median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

timed drop "$cli" run -- "${job[@]}" >/dev/null  # the store's first run
for ((i = 0; i < repeats; i++)); do
    timed drop "${job[@]}" >>"$work/driver"
    timed drop "$cli" run -- "${job[@]}" >>"$work/layer"
    timed keep "${job[@]}" >>"$work/own"
done
printf '%-12s %-12s %-12s\n' driver layer-2nd hashcat-own
printf '%-12.2f %-12.2f %-12.2f\n' "$(median <"$work/driver")" "$(median <"$work/layer")" \
    "$(median <"$work/own")"
