#!/usr/bin/env bash
# Usage: run_install_test.sh BUILD_DIR CONSUMER_SRC
# Fails on the first step that does not work; prints what each run answered.
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/kcache-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
test -f "$prefix/include/kcache/kcache.hpp"
test -x "$prefix/libexec/kcache/kcache-jit"

cmake -S "$src" -B "$work/b" -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log"
cmake --build "$work/b" >"$work/build.log"

export KCACHE_DIR=$work/store POCL_CACHE_DIR=$work/pocl
unset KCACHE_JIT_PATH
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
