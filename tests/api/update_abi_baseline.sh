#!/usr/bin/env bash
# Rewrites the reviewed public surface from a build, for a deliberate change:
# the C ABI baseline (tests/api/abi/) and libkcache.so's exported symbols
# (tests/api/exported_symbols.txt). Review the diff before committing it.
# Usage: tests/api/update_abi_baseline.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
lib=$build/api/libkcache.so
"$here/check_abi.sh" "$src" "$build" "$lib" --update
"$here/check_exports.sh" "$lib" --print >"$here/exported_symbols.txt"
echo "exported symbols rewritten: $here/exported_symbols.txt"
git -C "$src" diff --stat -- tests/api/abi tests/api/exported_symbols.txt
