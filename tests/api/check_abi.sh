#!/usr/bin/env bash
# The C ABI against the checked-in baseline (tests/api/abi/):
#   functions.txt  every kcache_* prototype of <kcache/kcache.h>, as gcc's
#                  -aux-info writes it: each must still be declared with the
#                  same type, and exported by libkcache.so;
#   types.abi      libabigail's description of every type the header
#                  declares (abidw of a probe library built from it with all
#                  debug types kept): abidiff fails on any change but the two
#                  the compatibility rule allows, fields appended at the end of
#                  a struct that has a `struct_size` member and enumerators
#                  appended to an enum (harmless to abidiff).
# Usage: check_abi.sh SOURCE_DIR BINARY_DIR LIB [--update]
# --update rewrites the baseline from the current header (a deliberate
# change: tests/api/update_abi_baseline.sh).
set -euo pipefail
src=$1
bin=$2
lib=$3
update=${4:-}
base=$src/tests/api/abi
work=$(mktemp -d "${TMPDIR:-/tmp}/kcache-abi-XXXXXX")
trap 'rm -rf "$work"' EXIT
includes=(-I"$src/include" -I"$bin/include" -I"$src/common/include")
printf '#include <kcache/kcache.h>\nint kcache_abi_probe(void) { return 0; }\n' >"$work/probe.c"

# Prototypes, one a line, in gcc's normalized spelling.
gcc -std=c11 -aux-info "$work/aux.txt" -fsyntax-only "${includes[@]}" "$work/probe.c"
grep -E '[ *]kcache_[a-z0-9_]+ \(' "$work/aux.txt" | grep -v kcache_abi_probe |
  sed 's|^/\*[^*]*\*/ ||' | LC_ALL=C sort >"$work/functions.txt"

# The header's types, as libabigail sees them.
gcc -std=c11 -shared -fPIC -g -fno-eliminate-unused-debug-types "${includes[@]}" \
    "$work/probe.c" -o "$work/probe.so"
abidw --load-all-types --drop-private-types --headers-dir "$src/include/kcache" \
      --no-corpus-path --no-comp-dir-path --short-locs "$work/probe.so" >"$work/types.abi"

if [ "$update" = "--update" ]; then
  cp "$work/functions.txt" "$work/types.abi" "$base/"
  echo "baseline rewritten: $base/functions.txt, $base/types.abi"
  exit 0
fi

failed=0
# Each baseline prototype still holds: a C file asserting the type of each.
{
  echo '#include <kcache/kcache.h>'
  sed -E 's/^extern (.*[ *])(kcache_[a-z0-9_]+) \((.*)\);$/_Static_assert(__builtin_types_compatible_p(__typeof__(\2), \1(\3)), "\2 is no longer declared as in the baseline");/' \
    "$base/functions.txt"
} >"$work/check.c"
if ! gcc -std=c11 -fsyntax-only "${includes[@]}" "$work/check.c" 2>"$work/check.err"; then
  grep -E 'error' "$work/check.err" >&2 || cat "$work/check.err" >&2
  failed=1
fi
# Each baseline function is still exported.
exported=$(nm -D --defined-only "$lib" | awk '{ sub(/@.*/, "", $3); print $3 }')
while read -r f; do
  if ! grep -qx "$f" <<<"$exported"; then
    echo "$f is in the baseline but not exported by $lib" >&2
    failed=1
  fi
done < <(sed -E 's/^extern .*[ *](kcache_[a-z0-9_]+) \(.*$/\1/' "$base/functions.txt")
# Types: appended fields under struct_size are suppressed; the rest fails.
cat >"$work/suppressions" <<'SUPP'
[suppress_type]
  type_kind = struct
  has_data_member = struct_size
  has_data_member_inserted_at = end
SUPP
if ! abidiff --non-reachable-types --suppressions "$work/suppressions" \
     "$base/types.abi" "$work/types.abi" >"$work/abidiff.txt"; then
  cat "$work/abidiff.txt" >&2
  failed=1
fi
if [ "$failed" -ne 0 ]; then
  echo "the C ABI differs from tests/api/abi/ (a deliberate change: tests/api/update_abi_baseline.sh)" >&2
  exit 1
fi
new=$(comm -13 "$base/functions.txt" "$work/functions.txt" | wc -l)
echo "C ABI: $(wc -l <"$base/functions.txt") baseline functions kept, $new added; types compatible"
