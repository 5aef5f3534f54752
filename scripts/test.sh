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
# The tests labelled il run on a PoCL built with SPIR-V (scripts/il-driver.sh,
# once per package version: about 3 minutes on 2 cores). It builds at the
# lowest priority while the main run's tests, which wait on much (deadlines,
# servers, helpers), leave the cores idle; the il set runs after it.
il_log="$build_dir/il-driver.log"
il_pid=""
if [ "${1:-}" = "" ]; then
  nice -n 19 scripts/il-driver.sh >"$il_log" 2>&1 &
  il_pid=$!
fi
# The tests labelled il (their own run below) are left out of the main one.
ctest --test-dir "$build_dir" -LE 'GPU|^il$' --output-on-failure -j "$(nproc)" "$@"

# The IL tests: each carries OCL_ICD_VENDORS naming that driver's ICD
# directory, so the loader offers it alone (docs/testing.md, "A driver that loads IL").
if [ -n "$il_pid" ]; then
  wait "$il_pid" || { cat "$il_log" >&2; echo "test: scripts/il-driver.sh failed (above)" >&2; exit 1; }
  ctest --test-dir "$build_dir" -L '^il$' --output-on-failure -j "$(nproc)"
fi

# Not on rusticl: the hanging-kernel test (llvmpipe returns from its spin loop,
# so nothing hangs; the watchdog is tested on PoCL), the layer tests that compare
# the probe's every answer with the driver's or count its hits (rusticl refuses,
# now and then, the probe's rebuild of a program whose kernel it released: it
# keeps an internal reference a while; docs/testing.md), the separate-compilation
# tests (they name PoCL's ICD themselves), hashcat, the concurrency test and the
# CLI's differential test (too slow on llvmpipe for their bounds: the last one's
# earlier-binary run outlasts the canary's 20 s per variant when llvmpipe shares
# two cores with another test), and the data-file identity test (rusticl reads libclc
# from a path fixed when it was built). The rejected-binary test runs: rusticl
# aborts on a foreign binary, which kcache loads in kcache-verify first.
rusticl_tests='^((CxxKat|CallerKat|SourceKat|SourceKatC|CanaryDifferential|CanaryRecord|CompilerFiles|CompilerIdentity|CompilerKey|CompilerKeyOfACopy)[.]'
rusticl_tests+='|CanaryFaults[.](EveryWrongResultOnEveryPrecisionPathAndSizeIsSuspect|ResultsAnUlpOrTwoAwayValidate'
rusticl_tests+='|TheDefaultSetCoversEveryKernelAndRecordsItsSeed)$'
rusticl_tests+='|ServiceLadder[.](CallerKernelWalksTheLadder|AFreshCacheLoadsAStoredBinaryFromItsHotCopyWithoutSQLite'
rusticl_tests+='|KeyFollowsSourceAndOptionsNotName|AliasFindsTheSameBinary|SlowKernelTimesOutThenFailsFastFromTheRecord'
rusticl_tests+='|BuildErrorComesBackWithTheLog|RejectedBinaryIsRecordedThenJit)$'
# warm's and the layer's tests of what the driver decides, where the outcome
# does not rest on the probe's rebuild of a program with kernels attached (above)
rusticl_tests+='|CliDevice[.](WarmTwiceBuildsOnceAndExplainSeesTheEntries'
rusticl_tests+='|WarmManifestBuildsTheLibrarysOwnKernels|WarmOnADeviceWithoutIlStoresNoSpirv)$'
rusticl_tests+='|Layer[.](ACompilePastTheDeadlineFailsTheBuildAtTheDeadlineAndTheRecordAnswersAtOnce'
rusticl_tests+='|AProgramFromIlOnADriverWithoutIlGetsTheDriversAnswer|AProgramThatIsNeverBuiltOpensNoCache)$'
rusticl_tests+='|LayerApps[.]APyopenclScriptGetsStoreHitsInASecondProcessAndRightResults$'
rusticl_tests+='|LayerDispatch[.]OnlyProgramPlatformAndContextEntriesAreTheLayersEveryOtherIsTheDrivers$'
rusticl_tests+='|LayerIncludes[.](AHangingCompileOfAnIncludedFileIsStoppedAtTheDeadline'
rusticl_tests+='|ASecondRunIsAHitAndAnEditedHeaderIsAMissWithTheNewAnswer|AnIncludeMadeByTheOptionsMacrosIsFollowedAsHashcatWritesThem)$'
rusticl_tests+='|LayerOpening[.]StartsBeforeTheFirstBuildNotInIt$'
rusticl_tests+='|LayerRobust[.]ThirtyTwoThreadsBuildingOneProgramPassAsTheDriverAloneDoes$)'
if [ "${1:-}" = "" ] && [ -f /etc/OpenCL/vendors/rusticl.icd ]; then
  icd_dir="$build_dir/rusticl-icd"
  mkdir -p "$icd_dir"
  cp /etc/OpenCL/vendors/rusticl.icd "$icd_dir/"
  OCL_ICD_VENDORS="$PWD/$icd_dir" RUSTICL_ENABLE=llvmpipe KCACHE_TEST_PLATFORM=rusticl \
    ctest --test-dir "$build_dir" -LE GPU --output-on-failure -j "$(nproc)" \
    -R "$rusticl_tests" -E '^(SourceKat[.]ATestThatHangsIsATimeoutVerdictNotAHang|CompilerIdentity[.]FollowsADataFileTheCompilerReads|CanaryDifferential[.]TheCliRecordsTheDifferential)$'
fi
