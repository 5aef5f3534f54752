#!/usr/bin/env bash
# Compares the dynamic symbols libkcache.so defines with the reviewed list of
# its public API (exported_symbols.txt, demangled, sorted). A symbol that is
# not in the list leaks an internal; one that is missing breaks the ABI.
# To accept a deliberate API change, regenerate the list (and the C ABI
# baseline) with tests/api/update_abi_baseline.sh [BUILD_DIR].
set -euo pipefail
lib="$1"
list="$(dirname "$0")/exported_symbols.txt"
actual="$(nm -D --defined-only "$lib" | awk '$2 != "A" { $1 = ""; $2 = ""; sub(/^  /, ""); print }' |
          c++filt | LC_ALL=C sort -u)"
if [ "${2:-}" = "--print" ]; then
  printf '%s\n' "$actual"
  exit 0
fi
if ! diff -u <(LC_ALL=C sort -u "$list") <(printf '%s\n' "$actual"); then
  echo "libkcache.so's exported symbols differ from $list (- expected, + exported)" >&2
  exit 1
fi
echo "libkcache.so exports exactly the $(printf '%s\n' "$actual" | wc -l) reviewed symbols"
