#!/usr/bin/env bash
# Sets up, builds and runs every test this machine can run (tests that need
# hardware it lacks carry the GPU label and are excluded by it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build_dir="${KCACHE_BUILD_DIR:-build}"
ctest --test-dir "$build_dir" -LE GPU --output-on-failure -j "$(nproc)" "$@"
