#!/usr/bin/env bash
# Sets up, builds everything (setup.sh --all) and runs every test (ctest -LE GPU: a test that needed a
# GPU would carry that label; none does, the device tests run on PoCL). Then the known-answer,
# canary-fault, differential and ladder tests run again on a second real OpenCL implementation,
# Mesa's rusticl on llvmpipe, with the loader offered rusticl alone. Before that, the tests that
# need a driver which loads SPIR-V (label il) run on their own, on a PoCL built with it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --all
build_dir="${KCACHE_BUILD_DIR:-build}"
# The tests labelled il (their own run below) are left out of the main one.
ctest --test-dir "$build_dir" -LE 'GPU|^il$' --output-on-failure -j "$(nproc)" "$@"

# The IL tests, on the SPIR-V PoCL that setup.sh built (scripts/il-driver.sh):
# each carries OCL_ICD_VENDORS naming its ICD directory, so the loader offers
# that driver alone (docs/testing.md, "A driver that loads IL").
if [ "${1:-}" = "" ]; then
  ctest --test-dir "$build_dir" -L '^il$' --output-on-failure -j "$(nproc)"
fi

# Not on rusticl: the hanging-kernel test (llvmpipe returns from its spin loop,
# so nothing hangs; the watchdog is tested on PoCL), the layer suites, which fail
# there (docs/testing.md), and the data-file identity test (rusticl reads libclc
# from a path fixed when it was built). The rejected-binary test runs: rusticl
# aborts on a foreign binary, which kcache loads in kcache-verify first.
rusticl_tests='^((CxxKat|CallerKat|SourceKat|SourceKatC|CanaryDifferential|CanaryRecord|CompilerFiles|CompilerIdentity|CompilerKey|CompilerKeyOfACopy)[.]'
rusticl_tests+='|CanaryFaults[.](EveryWrongResultOnEveryPrecisionPathAndSizeIsSuspect|ResultsAnUlpOrTwoAwayValidate'
rusticl_tests+='|TheDefaultSetCoversEveryKernelAndRecordsItsSeed)$'
rusticl_tests+='|Pocl[.](CallerKernelWalksTheLadder|AFreshCacheLoadsAStoredBinaryFromItsHotCopyWithoutSQLite'
rusticl_tests+='|KeyFollowsSourceAndOptionsNotName|AliasFindsTheSameBinary|SlowKernelTimesOutThenFailsFastFromTheRecord'
rusticl_tests+='|BuildErrorComesBackWithTheLog|RejectedBinaryIsRecordedThenJit)$)'
if [ "${1:-}" = "" ] && [ -f /etc/OpenCL/vendors/rusticl.icd ]; then
  icd_dir="$build_dir/rusticl-icd"
  mkdir -p "$icd_dir"
  cp /etc/OpenCL/vendors/rusticl.icd "$icd_dir/"
  OCL_ICD_VENDORS="$PWD/$icd_dir" RUSTICL_ENABLE=llvmpipe KCACHE_TEST_PLATFORM=rusticl \
    ctest --test-dir "$build_dir" -LE GPU --output-on-failure -j "$(nproc)" \
    -R "$rusticl_tests" -E '^(SourceKat[.]ATestThatHangsIsATimeoutVerdictNotAHang|CompilerIdentity[.]FollowsADataFileTheCompilerReads)$'
fi
