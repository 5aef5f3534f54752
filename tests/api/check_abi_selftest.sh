#!/usr/bin/env bash
# check_abi.sh against edited copies of <kcache/kcache.h>: what the
# compatibility rule allows passes, each kind of break fails.
# Usage: check_abi_selftest.sh SOURCE_DIR BINARY_DIR LIB
set -euo pipefail
src=$1
bin=$2
lib=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kcache-abi-self-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/include/kcache" "$work/tests/api"
ln -s "$src/common" "$work/common"
cp "$src"/include/kcache/*.h "$work/include/kcache/"  # kcache.h is replaced by each edit
ln -s "$src/tests/api/abi" "$work/tests/api/abi"
failed=0
# verdict EXPECTED NAME PYTHON-EDIT: applies the edit to a copy of the header
# and runs the check, which must exit 0 (pass) or not (fail).
verdict() {
  python3 - "$src/include/kcache/kcache.h" "$work/include/kcache/kcache.h" "$3" <<'PY'
import sys
s = open(sys.argv[1]).read()
old, new = sys.argv[3].split(' => ')
old = old.replace('\\n', '\n'); new = new.replace('\\n', '\n')
assert old in s, old
open(sys.argv[2], 'w').write(s.replace(old, new, 1))
PY
  if "$here/check_abi.sh" "$work" "$bin" "$lib" >"$work/out.txt" 2>&1; then got=pass; else got=fail; fi
  if [ "$got" = "$1" ]; then
    echo "ok: $2 → $got"
  else
    echo "WRONG: $2 → $got, expected $1"; cat "$work/out.txt"; failed=1
  fi
}
verdict pass "a field appended to kcache_info" \
  '    uint64_t compile_us;\n} kcache_info; =>     uint64_t compile_us;\n    uint64_t queued_us;\n} kcache_info;'
verdict pass "an enumerator appended to kcache_rung" \
  '    KCACHE_RUNG_REMOTE = 7 =>     KCACHE_RUNG_REMOTE = 7,\n    KCACHE_RUNG_LATER = 8'
verdict fail "a field's type changed" '    uint64_t total_us; =>     uint32_t total_us;'
verdict fail "a field inserted before the end" \
  '    kcache_rung rung;\n    uint64_t total_us; =>     kcache_rung rung;\n    uint64_t queued_us;\n    uint64_t total_us;'
verdict fail "an enumerator's value changed" '    KCACHE_RUNG_REMOTE = 7 =>     KCACHE_RUNG_REMOTE = 9'
verdict fail "a field appended to kcache_histogram (no struct_size: kcache_stats moves)" \
  '    uint64_t sum_ns; =>     uint64_t sum_ns;\n    uint64_t max_ns;'
verdict fail "a function's parameter changed" \
  'KCACHE_API void kcache_free(void* memory); => KCACHE_API void kcache_free(const void* memory);'
verdict fail "a function removed" 'KCACHE_API void kcache_free(void* memory); => '
exit $failed
