#!/usr/bin/env bash
# Usage: run_install_test.sh BUILD_DIR PYTHON PYTHON_INSTALL_DIR
# Installs the build into a temporary prefix, then imports the installed
# package with PYTHON from <prefix>/PYTHON_INSTALL_DIR and builds a program
# with the installed kcache-jit (found relative to the installed library, no
# KCACHE_JIT_PATH); `python3 -m kcache` runs the installed CLI.
set -euo pipefail
. "$(dirname "$0")/../support/install_prefix.sh"
install_to_temp_prefix "$1" kcache-pyinstall
python=$2
pydir=$3
pkg=$prefix/$pydir/kcache
for f in __init__.py _kcache.pyi py.typed _paths.py; do
  test -f "$pkg/$f" || { echo "missing $pkg/$f"; exit 1; }
done
ls "$pkg"/_kcache*.so >/dev/null

# With the prefix /usr this directory is on the system Python's own path.
"$python" -c "import sys; assert '/usr/$pydir' in sys.path, sys.path" ||
  { echo "/usr/$pydir is not on $python's sys.path"; exit 1; }

export PYTHONPATH=$prefix/$pydir KCACHE_DIR=$work/store POCL_CACHE_DIR=$work/pocl
: >"$work/config"  # an empty config file (kcache reads regular files only)
export KCACHE_CONFIG=$work/config
unset KCACHE_JIT_PATH KCACHE_PACKS
cd "$work"
run() {
  "$python" - <<'PY'
import pyopencl as cl, kcache
assert kcache.__file__.startswith(__import__("os").environ["PYTHONPATH"]), kcache.__file__
ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
with kcache.Cache() as cache:
    prg = cache.program(ctx, ctx.devices[0], "dot", dtype="f32")
print(prg.kcache_outcome.rung)
PY
}
first=$(run)
second=$(run)
echo "installed package: first run $first, second run $second"
[ "$first" = jit ]
[ "$second" = user_store ]
entries=$("$python" -m kcache stats --json | "$python" -c 'import json,sys; print(json.load(sys.stdin)["entries"])')
echo "python3 -m kcache stats: $entries entries"
[ "$entries" = 1 ]
echo "python install: ok"
