#!/usr/bin/env bash
# Run THERE, on the GPU machine, from the repository root, after
# bench/gpu/stage.sh staged .gpu/ here and the device tool carried it:
#   bash bench/canary/run_gpu.sh [REPS]   (default 5; the report goes to
#                                          $OUT/canary-report.txt, else .gpu/)
# canary_bench with NVIDIA's ICD (bench/gpu/nvidia_icd.sh) and Debian's ICD loader (ocl-icd 2.3,
# which reads OPENCL_LAYERS: the canary tests' layer simulates the driver
# updates) ahead of the machine's own. Each run gets an empty
# CUDA_CACHE_PATH: a driver update finds NVIDIA's ComputeCache of no use.
set -uo pipefail
root=$PWD
S=$root/.gpu
[ -x "$S/bin/canary_bench" ] || { echo "no staged canary_bench: run bench/gpu/stage.sh here first" >&2; exit 2; }
report=${OUT:-$S}/canary-report.txt
. "$root/bench/gpu/nvidia_icd.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME=$work/xdg HOME=$work/home TMPDIR=$work KCACHE_TEST_PLATFORM=NVIDIA
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$S/bin/canary_bench" --reps "${1:-5}" --layer "$S/bin/libkcache_fault_layer.so" \
    --jit "$S/prefix/libexec/kcache/kcache-jit" --verify "$S/prefix/libexec/kcache/kcache-verify"
} 2>&1 | tee "$report"
