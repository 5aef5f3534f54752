#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ (clang, ASan+UBSan, coverage) in
# their own build directory and runs one of them for real.
#   scripts/fuzz.sh NAME [SECONDS] [-- LIBFUZZER_OPTIONS...]
#     NAME     wire, key, pack, store, hot, manifest, config, device_db, cli or
#              remote_envelope
#              (the harness fuzz/NAME_fuzz.cpp)
#     SECONDS  how long to fuzz (default 600)
#   KCACHE_FUZZ_BUILD_DIR=dir   build elsewhere (default build-fuzz)
# The working corpus grows in DIR/corpus/NAME (seeded from fuzz/corpus/NAME);
# findings (crash-*, timeout-*, oom-*) are written to DIR/findings/NAME/ and
# the run exits non-zero. Replay one: DIR/fuzz/fuzz_NAME FILE. A new seed
# worth keeping goes to fuzz/corpus/NAME (small: `-merge=1` picks them).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}
[ $# -ge 1 ] || usage
name=$1
shift
seconds=600
if [ $# -ge 1 ] && [ "$1" != "--" ]; then
  seconds=$1
  shift
fi
[ "${1:-}" = "--" ] && shift
[ -f "fuzz/${name}_fuzz.cpp" ] || { echo "fuzz.sh: no harness fuzz/${name}_fuzz.cpp" >&2; usage; }
case $seconds in '' | *[!0-9]*) echo "fuzz.sh: SECONDS must be a number" >&2; usage ;; esac

dir=${KCACHE_FUZZ_BUILD_DIR:-build-fuzz}
cc=$(command -v clang-14 || command -v clang || true)
cxx=$(command -v clang++-14 || command -v clang++ || true)
[ -n "$cc" ] && [ -n "$cxx" ] || { echo "fuzz.sh: clang is needed (apt-get install clang-14)" >&2; exit 2; }
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_CXX_COMPILER="$cxx" -DKCACHE_FUZZ=ON -DKCACHE_SANITIZE=address,undefined \
  -DKCACHE_BUILD_BENCH=OFF -DKCACHE_AOT_PACK=OFF "${launcher[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" --target "fuzz_${name}"

source scripts/sanitizers/env.sh
# The harnesses write their inputs to files (packs, stores, manifests): in
# memory when there is a tmpfs, so that disk syncs do not set the pace.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
mkdir -p "$dir/corpus/$name" "$dir/findings/$name"
exec "$dir/fuzz/fuzz_${name}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$dir/findings/$name/" "$@" \
  "$dir/corpus/$name" "fuzz/corpus/$name"
