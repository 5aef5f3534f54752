#!/usr/bin/env bash
# Run THERE, on the GPU machine, from the repository root, after
# bench/gpu/stage.sh staged .gpu/ here and the device tool carried it:
#   bash bench/layer/run_gpu.sh [REPEATS]   (default 3; the report goes to
#                                            $OUT/layer-report.txt, else .gpu/)
# bench/layer/run.sh with NVIDIA's ICD (bench/gpu/nvidia_icd.sh), the staged kcache, layer and
# applications (clpeak, CLBlast's tuner; pyopencl is not on that machine and
# is skipped), and Debian's ICD loader (ocl-icd 2.3, which reads
# OPENCL_LAYERS) ahead of the machine's own. The baseline is NVIDIA's
# ComputeCache alone: run.sh's driver-cache column (CUDA_CACHE_PATH warm).
set -uo pipefail
root=$PWD
S=$root/.gpu
[ -x "$S/prefix/bin/kcache" ] || { echo "no staged build: run bench/gpu/stage.sh here first" >&2; exit 2; }
report=${OUT:-$S}/layer-report.txt
. "$root/bench/gpu/nvidia_icd.sh"
export PATH=$S/prefix/bin:$S/bin:$PATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME=$work/xdg HOME=$work/home
export KCACHE_JIT_PATH=$S/prefix/libexec/kcache/kcache-jit
export KCACHE_BENCH_CLI=$S/prefix/bin/kcache KCACHE_BENCH_APPS=$S/bin/layer_bench_apps
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  KCACHE_DIR=$work/doctor kcache doctor 2>&1 | grep -iE 'layer|loader'
  # The platforms the applications meet: clpeak builds once for each.
  "$KCACHE_BENCH_APPS" devices
  bash "$root/bench/layer/run.sh" "${1:-3}"
} 2>&1 | tee "$report"
