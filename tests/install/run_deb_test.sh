#!/usr/bin/env bash
# Usage: run_deb_test.sh BUILD_DIR
# Builds the .deb with CPack, unpacks it into a staging root (dpkg -x) and runs
# the CLI from there: doctor, ls of the user store, ls of the installed pack.
set -euo pipefail
build=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/kcache-deb-XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log") || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/out/kcache_*.deb)
echo "package: $(basename "$deb") ($(stat -c %s "$deb") bytes)"
dpkg -x "$deb" "$work/root"
root=$work/root
test -x "$root/usr/bin/kcache"
test -x "$root/usr/libexec/kcache/kcache-jit"
test -f "$root/usr/include/kcache/kcache.h"
ls "$root"/usr/lib/libkcache.so* >/dev/null

export KCACHE_DIR=$work/store HOME=$work/home XDG_CACHE_HOME=$work/cache
unset KCACHE_JIT_PATH KCACHE_PACKS
"$root/usr/bin/kcache" doctor >"$work/doctor.txt" || { cat "$work/doctor.txt"; exit 1; }
grep -q "$root/usr/libexec/kcache/kcache-jit" "$work/doctor.txt" ||
  { echo "doctor does not find the staged kcache-jit"; cat "$work/doctor.txt"; exit 1; }
grep -q "$root/usr/share/kcache/packs" "$work/doctor.txt" ||
  { echo "doctor does not name the staged pack directory"; cat "$work/doctor.txt"; exit 1; }
"$root/usr/bin/kcache" ls
pack=$(ls "$root"/usr/share/kcache/packs/*.kcpack 2>/dev/null | head -n 1 || true)
if [ -n "$pack" ]; then
  n=$("$root/usr/bin/kcache" ls --pack "$pack" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
  echo "installed pack $(basename "$pack"): $n entries"
  [ "$n" -gt 0 ]
fi
# The Python package (when the build has it), imported from the staging root.
if grep -q '^KCACHE_PYTHON:BOOL=ON' "$build/CMakeCache.txt"; then
  pydir=$(sed -n 's/^KCACHE_PYTHON_INSTALL_DIR:STRING=//p' "$build/CMakeCache.txt")
  python=$(sed -n 's/^KCACHE_PYTHON_EXECUTABLE:INTERNAL=//p' "$build/CMakeCache.txt")
  ls "$root/usr/$pydir"/kcache/_kcache*.so >/dev/null
  PYTHONPATH=$root/usr/$pydir "$python" -c 'import kcache, sys
assert kcache.__file__.startswith(sys.argv[1]), kcache.__file__
with kcache.Cache() as c:
    print("python package from the .deb:", kcache.__file__, c.stats()["entries"], "entries")' \
    "$root/usr/$pydir"
fi
echo "deb: ok"
