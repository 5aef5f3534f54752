#!/usr/bin/env bash
# Run THERE, on the GPU machine, from the repository root, after
# bench/gpu/stage.sh staged .gpu/ here and the device tool carried it:
#   bash bench/gpu/run.sh            (the report goes to $OUT/gpu-report.txt, else
#                                     .gpu/gpu-report.txt: never into the tree)
# Registers NVIDIA's OpenCL ICD, then: identity probe, warm every variant,
# a second process that must hit for all, warm again (builds nothing), the
# kernels' KATs and the service tests on the GPU, the examples operator
# library, PyTorch comparison, benchmarks (the helper's cost per compile, the
# watchdog's overshoot, cold warm with and without the pool), and the long-lived process
# (hit vs floor with a new context per sample, the hit's steps, first hit in a
# fresh process vs the floor's, resident memory per 1,000 contexts;
# GPU_BENCH_CONTEXTS=N changes the 1,000 rounds). parts-ab (not in all):
# section 1b of the staged gpu_bench_old and gpu_bench in turn
# (ab_parts.sh, GPU_AB_ROUNDS rounds, default 5); first-ab (not in all):
# section 3 of gpu_bench_old, gpu_bench, then gpu_bench_old again.
set -uo pipefail
root=$PWD
S=$root/.gpu
report=${OUT:-$S}/gpu-report.txt
echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
# The GPU alone, not PoCL (that machine's loader reads OCL_ICD_FILENAMES; an
# OCL_ICD_VENDORS naming one .icd file hid NVIDIA from child processes there).
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1
unset OCL_ICD_VENDORS
export LD_LIBRARY_PATH=$S/lib:$S/prefix/lib
export PATH=$S/prefix/bin:$S/bin:$PATH
work=$(mktemp -d)
export KCACHE_DIR=$work/store XDG_CACHE_HOME=$work/xdg HOME=$work/home
export KCACHE_JIT_PATH=$S/prefix/libexec/kcache/kcache-jit KCACHE_TEST_JIT_PATH=$S/prefix/libexec/kcache/kcache-jit
export KCACHE_TEST_PLATFORM=NVIDIA
failures=0
step() {
  local name=$1; shift
  echo; echo "===== $name: $*"
  local t0=$(date +%s%N)
  "$@"; local rc=$?
  local t1=$(date +%s%N)
  echo "===== $name: exit $rc, $(( (t1 - t0) / 1000000 )) ms"
  [ "$rc" -eq 0 ] || failures=$((failures + 1))
}
# PARTS (first argument, comma-separated) pick what runs, so that one device
# call fits its 10-minute limit: proof (identity, warm, second-process hits,
# the GPU tests, the PyTorch comparison), long (the long-lived process),
# jit (the helper's cost per compile and the watchdog's overshoot), warm
# (cold warm with and without the helper pool), bench (the older hit bench,
# jit and warm) or all (the default: everything, longer than one call).
part=${1:-all}
want() { [ "$part" = all ] || [[ ",$part," == *",$1,"* ]]; }
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  if want proof; then
    step probe kcache devices
    step warm kcache warm --jobs 8
    step second-process gpu_bench check-hits
    step warm-again kcache warm --jobs 8
    step kats kernels_pocl_test --gtest_brief=1
    step service-tests cache_api_test --gtest_brief=1
    step context-tests cache_context_test --gtest_brief=1
    step ladder-tests cache_ladder_test --gtest_brief=1 --gtest_filter=-*RejectedBinary*:*RejectedPackBinary*
    step ops-tests ops_test --gtest_brief=1
    step torch python3 bench/gpu/torch_compare.py "$S/bin/ops_dump" "$work/torch"
  fi
  if want long; then
    step long-lived gpu_bench long-lived "$work/long"
  fi
  if [[ ",$part," == *",parts-ab,"* || ",$part," == *",first-ab,"* ]]; then
    printf '#!/bin/sh\nKCACHE_JIT_PATH=%s exec %s "$@"\n' "$S/bin/kcache-jit-old" \
      "$S/bin/gpu_bench_old" > "$work/gpu_bench_old.sh"
    chmod +x "$work/gpu_bench_old.sh"
  fi
  if [[ ",$part," == *",parts-ab,"* ]]; then
    step parts-ab env ROUNDS="${GPU_AB_ROUNDS:-5}" bash bench/gpu/ab_parts.sh \
      "$work/gpu_bench_old.sh" "$S/bin/gpu_bench"
  fi
  if [[ ",$part," == *",first-ab,"* ]]; then
    # Section 3 (the first hit in a fresh process) of the older build, this
    # one's, then the older's again, each in a store of its own.
    step first-old env GPU_BENCH_SECTIONS=3 "$work/gpu_bench_old.sh" long-lived "$work/first-old"
    step first-new env GPU_BENCH_SECTIONS=3 gpu_bench long-lived "$work/first-new"
    step first-old-again env GPU_BENCH_SECTIONS=3 "$work/gpu_bench_old.sh" long-lived \
      "$work/first-old-again"
  fi
  if want bench; then
    step bench gpu_bench bench "$work/bench"
  fi
  if want bench || want jit; then
    # The helper's cost per compile and the watchdog (bench/compiler/README.md):
    # one-shot vs pooled helpers against an in-process build, per registry
    # kernel; 20 timeouts past a 2 s deadline; cold warm before/after the pool.
    step jit-cost jit_cost_bench breakdown "${GPU_JIT_ROUNDS:-5}"
    step jit-overshoot jit_cost_bench overshoot 20 2000
  fi
  if want bench || want warm; then
    step warm-pool bash bench/compiler/warm_pool_bench.sh "$S/prefix/bin/kcache" \
      "${GPU_WARM_ROUNDS:-3}" 8
  fi
  echo; echo "steps failed: $failures"
} 2>&1 | tee "$report"
