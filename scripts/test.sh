#!/usr/bin/env bash
# Sets up, builds everything (setup.sh --all) and runs every test (ctest -LE GPU: a test that needed a
# GPU would carry that label; none does, the device tests run on PoCL).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --all
build_dir="${KCACHE_BUILD_DIR:-build}"
ctest --test-dir "$build_dir" -LE GPU --output-on-failure -j "$(nproc)" "$@"
