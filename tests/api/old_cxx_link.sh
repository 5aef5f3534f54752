#!/usr/bin/env bash
# A C++ program compiled against kcache 0.2.0's headers (OBJECT), linked
# against this tree's libkcache.so (LIB), which exports only the C API: the
# link must fail naming the C++ API's missing symbols. The same program linked
# as 0.2 left it (DT_NEEDED libkcache.so.1) must be refused by the dynamic
# loader where only this library (libkcache.so.2) is installed: exit 127,
# never a run of its calls or a signal.
# Usage: old_cxx_link.sh CXX OBJECT LIB
set -uo pipefail
cxx=$1
obj=$2
lib=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/kcache-oldcxx-XXXXXX")
trap 'rm -rf "$work"' EXIT
libdir=$(dirname "$lib")
link=("$cxx" "$obj" -o "$work/caller" -L"$libdir" -Wl,-rpath,"$libdir" -lkcache -lOpenCL)

if "${link[@]}" >"$work/link.txt" 2>&1; then
  echo "FAILED: the 0.2 C++ caller linked against a library that should not export its symbols"
  exit 1
fi
if ! grep -q "undefined reference to \`kcache::Cache::open_default" "$work/link.txt"; then
  echo "FAILED: the link failed without naming kcache::Cache::open_default:"
  cat "$work/link.txt"
  exit 1
fi
echo "ok: the link fails naming the C++ API of 0.2:"
grep -o "undefined reference to \`kcache::[^(]*" "$work/link.txt" | sort -u | sed 's/^/  /'

# The same program as 0.2 left it: linked against a library of 0.2's SONAME
# (libkcache.so.1; a stub defining the symbols it names), then run where only
# this library is installed. The loader must refuse it, naming the library.
mkdir -p "$work/old"
nm -u "$obj" | awk '$2 ~ /^_ZN?K?6kcache|^kcache_/ { print "void " $2 "(void) {}" }' >"$work/old/stub.c"
cc -shared -fPIC -o "$work/old/libkcache.so" -Wl,-soname,libkcache.so.1 "$work/old/stub.c" &&
  "$cxx" "$obj" -o "$work/caller" -L"$work/old" -lkcache -lOpenCL >"$work/link2.txt" 2>&1 || {
  echo "FAILED: the program could not be linked as 0.2 left it:"
  cat "$work/link2.txt"
  exit 1
}
mkdir -p "$work/new"
cp -L "$lib" "$work/new/$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')"
LD_LIBRARY_PATH=$work/new KCACHE_DIR=$work/store KCACHE_CANARY=off "$work/caller" >"$work/run.txt" 2>&1
rc=$?
if [ "$rc" -ne 127 ] || ! grep -q "libkcache.so.1: cannot open shared object file" "$work/run.txt"; then
  echo "FAILED: the 0.2 program exited $rc (expected 127, libkcache.so.1 not found):"
  cat "$work/run.txt"
  exit 1
fi
echo "ok: the 0.2 program is refused by the dynamic loader (exit 127): $(head -c 300 "$work/run.txt")"
