#!/usr/bin/env bash
# Sets up, builds everything (setup.sh --all) and runs every test (ctest -LE GPU: a test that needed a
# GPU would carry that label; none does, the device tests run on PoCL). Then the known-answer,
# canary-fault, differential and ladder tests run again on a second real OpenCL implementation,
# Mesa's rusticl on llvmpipe, with the loader offered rusticl alone.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --all
build_dir="${KCACHE_BUILD_DIR:-build}"
ctest --test-dir "$build_dir" -LE GPU --output-on-failure -j "$(nproc)" "$@"

# Not on rusticl: the hanging-kernel test (llvmpipe returns from its spin loop,
# so nothing hangs; the watchdog is tested on PoCL), the layer suites and a
# rejected-binary test (rusticl aborts on a foreign binary), which fail there (docs/testing.md),
# and the data-file identity test (rusticl reads libclc from a path fixed when it was built).
rusticl_tests='^((CxxKat|CallerKat|SourceKat|SourceKatC|CanaryDifferential|CanaryRecord|CompilerFiles|CompilerIdentity|CompilerKey|CompilerKeyOfACopy)[.]'
rusticl_tests+='|CanaryFaults[.](EveryWrongResultOnEveryPrecisionPathAndSizeIsSuspect|ResultsAnUlpOrTwoAwayValidate'
rusticl_tests+='|TheDefaultSetCoversEveryKernelAndRecordsItsSeed)$'
rusticl_tests+='|Pocl[.](CallerKernelWalksTheLadder|AFreshCacheLoadsAStoredBinaryFromItsHotCopyWithoutSQLite'
rusticl_tests+='|KeyFollowsSourceAndOptionsNotName|AliasFindsTheSameBinary|SlowKernelTimesOutThenFailsFastFromTheRecord'
rusticl_tests+='|BuildErrorComesBackWithTheLog)$)'
if [ "${1:-}" = "" ] && [ -f /etc/OpenCL/vendors/rusticl.icd ]; then
  icd_dir="$build_dir/rusticl-icd"
  mkdir -p "$icd_dir"
  cp /etc/OpenCL/vendors/rusticl.icd "$icd_dir/"
  OCL_ICD_VENDORS="$PWD/$icd_dir" RUSTICL_ENABLE=llvmpipe KCACHE_TEST_PLATFORM=rusticl \
    ctest --test-dir "$build_dir" -LE GPU --output-on-failure -j "$(nproc)" \
    -R "$rusticl_tests" -E '^(SourceKat[.]ATestThatHangsIsATimeoutVerdictNotAHang|CompilerIdentity[.]FollowsADataFileTheCompilerReads)$'
fi
