#!/usr/bin/env bash
# Run HERE (Debian 12, after scripts/setup.sh): stages what bench/gpu/run.sh
# needs on the GPU machine into .gpu/ (git-ignored; carried by the device
# tool): the installed tree, stripped test and bench binaries, and the few
# shared libraries that machine lacks. The GPU machine has no SQLite header,
# no GoogleTest library and no package registry, so we build here and run there.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${KCACHE_BUILD_DIR:-build}
stage=.gpu
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib"
cmake --build "$build" -j "$(nproc)" >/dev/null
cmake --install "$build" --prefix "$PWD/$stage/prefix" >/dev/null
strip "$stage"/prefix/bin/* "$stage"/prefix/libexec/kcache/* "$stage"/prefix/lib/libkcache.so.* 2>/dev/null || true
for b in bench/gpu/gpu_bench bench/gpu/ops_dump bench/layer/layer_bench_apps bench/compiler/jit_cost_bench tests/kernels/kernels_pocl_test \
         tests/service/cache_ladder_test tests/service/cache_api_test tests/service/cache_context_test tests/device_db/device_db_pocl_tests \
         tests/ops/ops_test bench/canary/canary_bench bench/compiler/il_build_bench tests/canary/libkcache_fault_layer.so; do
  [ -f "$build/$b" ] && strip -o "$stage/bin/$(basename "$b")" "$build/$b"
done
# GPU_BENCH_OLD=DIR: the build directory of an older commit (its gpu_bench
# built with this tree's bench/gpu sources), staged as gpu_bench_old with
# its own kcache-jit, for run.sh's side-by-side part (parts-ab).
if [ -n "${GPU_BENCH_OLD:-}" ]; then
  strip -o "$stage/bin/gpu_bench_old" "$GPU_BENCH_OLD/bench/gpu/gpu_bench"
  strip -o "$stage/bin/kcache-jit-old" "$GPU_BENCH_OLD/compiler/kcache-jit"
fi
# The applications of bench/layer/run_gpu.sh (Debian's; that machine has
# none) and Debian's ICD loader, which reads OPENCL_LAYERS, in a folder of
# its own that only that script puts first.
for app in clpeak clblast_tuner_xdot; do
  if p=$(command -v "$app"); then cp "$p" "$stage/bin/"; fi
done
mkdir -p "$stage/ocl-icd" && cp -L /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 "$stage/ocl-icd/"
# Every shared library the staged programs load, but the C and C++ runtimes
# and the OpenCL ICD loader, which that machine has (its own driver is there).
for f in "$stage"/prefix/bin/* "$stage"/prefix/libexec/kcache/* "$stage"/prefix/lib/libkcache.so.* \
         "$stage"/bin/*; do
  ldd "$f" 2>/dev/null | awk '/=> \// { print $3 }'
done | sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*|libOpenCL|libkcache)\.so' |
  while read -r l; do cp -L "$l" "$stage/lib/"; done
rm -rf "$stage"/prefix/lib/python3*  # the Python package is not used there
du -sh "$stage"
