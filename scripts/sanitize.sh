#!/usr/bin/env bash
# Builds kcache with sanitizers in a build directory of their own and runs
# tests there: clang-14 when installed (else CMake's default compiler), -O1,
# line tables, a unity build (CMAKE_UNITY_BUILD: about 5 minutes for the
# ASan set on 2 cores, against about 13 with gcc file by file; CI runs it).
#   scripts/sanitize.sh [address] [CTEST_ARGS...]
#       ASan + UBSan (+ LSan) in build-asan/. Without CTEST_ARGS: the CI set,
#       the store, compiler, device database, service (cache, with the
#       in-process rung's contexts and its releaser thread), CLI and
#       fuzz-corpus tests (labels store compiler device_db pocl cli fuzz;
#       not GPU, python or install: the Python module and the install tree
#       are not built here). The only slow tests of these targets are the two
#       context-cycling ones (a minute and a half): they are where a context
#       released under the releaser's sweep shows, so they run.
#   scripts/sanitize.sh thread [CTEST_ARGS...]
#       TSan in build-tsan/: the service's threads (single-flight, background
#       compiles, the in-process map and its releaser thread: tests/service,
#       labels pocl and slow) and
#       the JIT helper pool's (tests/compiler/jit_pool*_test.cpp), with
#       kcache-jit built under TSan too. Not run: the test that counts a
#       stack overflow as a crash (TSan turns that into exit code 66).
#   KCACHE_SANITIZE_TARGETS="t1 t2"   build these test targets instead
# Only the test targets needed are built. Suppressions and run-time options:
# scripts/sanitizers/ (OpenCL driver frames only). OpenCL runs on PoCL alone.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=address
if [ $# -ge 1 ] && { [ "$1" = address ] || [ "$1" = thread ]; }; then
  mode=$1
  shift
fi
fuzz_targets="fuzz_wire_replay fuzz_key_replay fuzz_pack_replay fuzz_store_replay fuzz_hot_replay
  fuzz_manifest_replay fuzz_config_replay fuzz_device_db_replay fuzz_cli_replay
  fuzz_remote_envelope_replay fuzz_errata_replay fuzz_handover_replay"
if [ "$mode" = address ]; then
  dir=build-asan
  flags=address,undefined
  targets="store_test compiler_runner_test compiler_protocol_test compiler_helper_test
    compiler_jit_test device_db_tests cache_api_test cache_api_store_test cache_ladder_test
    cache_context_test cache_context_cycle_test cli_tests cli_pocl_tests $fuzz_targets"
  # Not CompilerJit.AddressSpaceCapIsAppliedToTheHelper: ASan reserves terabytes of
  # address space for its shadow when a process starts, so a helper under a
  # 4 GiB address-space cap cannot start at all (the cap is tested in build/).
  # Nor CliLoadCheck.VerifyReportsABinaryTheDriverCannotLoadAndRecordsIt: it
  # expects PoCL to abort on a truncated binary, but PoCL first reads past the
  # end of its own copy of it, and ASan's memcpy ends kcache-verify there
  # (exit 1, not a signal); hiding that would take a suppression of every
  # interceptor PoCL calls (the test runs in build/).
  default_args=(-L 'store|compiler|device_db|pocl|cli|fuzz' -LE 'GPU|python|install|api'
    -E '^(CompilerJit[.]AddressSpaceCapIsAppliedToTheHelper|CliLoadCheck[.]VerifyReportsABinaryTheDriverCannotLoadAndRecordsIt)$')
else
  dir=build-tsan
  flags=thread
  targets="cache_concurrency_test cache_api_test cache_api_store_test cache_ladder_test
    cache_pool_test cache_context_test cache_context_cycle_test compiler_pool_test kcache-jit"
  default_args=(-L pocl -LE 'GPU|python|install|api' -E '^CompilerJitPool[.]NoZombiesAfterTimeoutsAndCrashes$')
fi
targets=${KCACHE_SANITIZE_TARGETS:-$targets}
[ $# -gt 0 ] || set -- "${default_args[@]}"

options=()
if command -v ccache >/dev/null; then
  options+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if command -v clang-14 >/dev/null && command -v clang++-14 >/dev/null; then
  options+=(-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14)
fi
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCMAKE_UNITY_BUILD=ON -DKCACHE_SANITIZE="$flags" \
  -DKCACHE_WERROR=ON -DKCACHE_BUILD_BENCH=OFF -DKCACHE_AOT_PACK=OFF "${options[@]}" >/dev/null
# shellcheck disable=SC2086 # a list of target names
cmake --build "$dir" -j "$(nproc)" --target $targets

source scripts/sanitizers/env.sh
# The Intel ICD dlopens its compiler with RTLD_DEEPBIND, which the
# sanitizers' interceptors cannot work with: the ICD loader sees PoCL alone.
if [ -f /etc/OpenCL/vendors/pocl.icd ]; then
  mkdir -p "$dir/icd"
  cp /etc/OpenCL/vendors/pocl.icd "$dir/icd/"
  export OCL_ICD_VENDORS=$PWD/$dir/icd
fi
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" "$@"
