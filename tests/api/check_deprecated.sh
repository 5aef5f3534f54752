#!/usr/bin/env bash
# The 0.2 entry points are deprecated in the installed header: a C caller
# of each is warned, naming its replacement, and is quiet when it defines
# KCACHE_NO_DEPRECATION_WARNINGS.
#   check_deprecated.sh CC INCLUDE_DIR... (the source and build include dirs)
set -uo pipefail
cc=$1
shift
includes=()
for d in "$@"; do includes+=(-I "$d"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/old.c" <<'C'
#include "kcache/kcache.h"
int calls(kcache_cache* c, cl_context x, cl_device_id d) {
    cl_program p = 0;
    unsigned char* b = 0;
    size_t n = 0;
    return kcache_get_program(c, x, d, "dot", 0, 0, KCACHE_MODE_BLOCKING, &p, 0) +
           kcache_get_program_source(c, x, d, "kernel void k(){}", 0, 0, 0, 0,
                                     KCACHE_MODE_BLOCKING, &p, 0) +
           kcache_get_binary(c, x, d, "dot", 0, 0, KCACHE_MODE_BLOCKING, &b, &n);
}
C
fail() { echo "FAIL: $*" >&2; exit 1; }
if "$cc" -fsyntax-only -Werror=deprecated-declarations "${includes[@]}" "$work/old.c" 2>"$work/err"; then
  fail "calls of the 0.2 entry points compiled without a deprecation warning"
fi
for replacement in kcache_get_kernel_program kcache_get_source_program kcache_get_kernel_binary; do
  grep -q "use $replacement" "$work/err" || { cat "$work/err" >&2; fail "no warning names $replacement"; }
done
"$cc" -fsyntax-only -Werror -DKCACHE_NO_DEPRECATION_WARNINGS "${includes[@]}" "$work/old.c" ||
  fail "KCACHE_NO_DEPRECATION_WARNINGS did not keep the calls quiet"
echo "ok: three deprecated entry points warn, each naming its replacement"
