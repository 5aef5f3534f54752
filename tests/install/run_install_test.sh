#!/usr/bin/env bash
# Usage: run_install_test.sh BUILD_DIR CONSUMER_SRC OPS_SRC
# Fails on the first step that does not work; prints what each run answered.
# The installed AOT pack is checked too (installed_pack.sh): its SPIR-V
# entries under KCACHE_PACK_IL.
# OPS_SRC (examples/ops) is built against the prefix as an outside operator
# library would be: installed headers, kcache::kcache and kcache::ops only.
set -euo pipefail
. "$(dirname "$0")/../support/install_prefix.sh"
. "$(dirname "$0")/installed_pack.sh"
install_to_temp_prefix "$1" kcache-install
src=$2
ops_src=$3
test -f "$prefix/include/kcache/kcache.hpp"
test -x "$prefix/libexec/kcache/kcache-jit"
test -x "$prefix/libexec/kcache/kcache-verify"
test -f "$prefix/include/kcache/cl/launch.hpp"
# The launchers are a library of their own; libkcache.so exports none of them.
test -f "$prefix/lib/libkcache-ops.so"
test -f "$prefix/lib/pkgconfig/kcache-ops.pc"
if nm -D --defined-only "$prefix/lib/libkcache.so" | c++filt | grep 'kcache::cl::' >/dev/null; then
  echo "libkcache.so exports launchers" >&2
  exit 1
fi

cmake -S "$src" -B "$work/b" -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log"
cmake --build "$work/b" >"$work/build.log"

export KCACHE_DIR=$work/store POCL_CACHE_DIR=$work/pocl
unset KCACHE_JIT_PATH
# The AOT pack (KCACHE_AOT_PACK), with SPIR-V per variant under KCACHE_PACK_IL.
check_installed_pack "$prefix/bin/kcache" "$prefix/share/kcache/packs" "$1"
first=$("$work/b/consumer")
second=$("$work/b/consumer")
echo "C++ consumer: first run: $first; second run: $second"
[ "$first" = "ok jit" ]
[ "$second" = "ok user_store" ]

# The C API through pkg-config.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cc -std=c11 -Wall -Werror "$src/consumer_c.c" $(pkg-config --cflags --libs kcache) -o "$work/cc"
third=$(LD_LIBRARY_PATH=$prefix/lib "$work/cc")
echo "C consumer: $third"
[ "$third" = "KCACHE_OK 1" ]

# The example operator library, built on its own against the prefix; its demo
# runs every op on the device through kcache and checks the results against
# the CPU references (exit 1 on a wrong value). A second process hits the store.
cmake -S "$ops_src" -B "$work/ops" -DCMAKE_PREFIX_PATH="$prefix" >"$work/ops-configure.log"
cmake --build "$work/ops" >"$work/ops-build.log"
demo=$("$work/ops/ops_demo")
echo "ops_demo: $demo"
again=$("$work/ops/ops_demo")
echo "ops_demo again: $again"
[ "$(grep -c 'ok .*device (kcache: ' <<<"$demo")" = 4 ]
grep -q 'device (kcache: jit)' <<<"$demo"
[ "$(grep -c 'ok .*device (kcache: ' <<<"$again")" = 4 ]
if grep -q 'jit)' <<<"$again"; then exit 1; fi
