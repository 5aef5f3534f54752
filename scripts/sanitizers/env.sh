# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: sanitizer run-time
# options and the OpenCL driver noise they must ignore. Only driver frames
# are suppressed (the files beside this one say why, line by line); nothing
# of kcache's is.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# use_sigaltstack=0: LLVM (inside PoCL) installs its own alternate signal
# stack on the threads it compiles on, replacing ASan's; ASan's handler then
# runs on a stack it does not know and reports a false stack overflow.
export ASAN_OPTIONS="use_sigaltstack=0:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# ignore_noninstrumented_modules: memory accesses made by libraries built
# without TSan (PoCL, LLVM) are not tracked; kcache's own code is instrumented
# and still reported. PoCL's threads otherwise show as races against strings
# PoCL itself allocates inside clBuildProgram.
export TSAN_OPTIONS="suppressions=$here/tsan.supp:halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"

