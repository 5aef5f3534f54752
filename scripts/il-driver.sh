#!/usr/bin/env bash
# Builds the OpenCL driver the IL tests run on: PoCL from Debian's own
# pocl-source package, configured with SPIR-V (Debian's PoCL has none), once.
# The build is cached by the package's version and the host CPU its one
# kernel-library variant is built for; a second run only checks that and
# prints the directory to give the ICD loader.
#   scripts/il-driver.sh          build what is missing, print the ICD directory
#   KCACHE_IL_DRIVER_DIR=dir      keep the build there (default: .deps/pocl-il)
#   KCACHE_IL_DRIVER_JOBS=n       parallel jobs of the build (default: nproc)
# Needs the packages scripts/setup.sh --deps installs (pocl-source, llvm-15-dev,
# libclang-15-dev, libclang-cpp15-dev, libhwloc-dev, llvm-spirv-15).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${KCACHE_IL_DRIVER_DIR:-$repo/.deps/pocl-il}"
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
tarball=/usr/src/pocl.tar.xz
spirv=/usr/bin/llvm-spirv-15
llvm_config=/usr/bin/llvm-config-15

fail() { echo "il-driver: $*" >&2; exit 1; }
version="$(dpkg-query -W -f='${Version}' pocl-source 2>/dev/null)" ||
  fail "pocl-source is not installed (scripts/setup.sh --deps installs it)"
[ -f "$tarball" ] || fail "$tarball is missing (reinstall pocl-source)"
[ -x "$spirv" ] || fail "$spirv is missing (scripts/setup.sh --deps installs llvm-spirv-15)"
[ -x "$llvm_config" ] || fail "$llvm_config is missing (scripts/setup.sh --deps installs llvm-15-dev)"
# The kernel library is built for this CPU only (PoCL's "native" variant), so
# a cache directory shared between machines keeps one build per CPU model.
cpu="$(/usr/bin/llc-15 --version 2>/dev/null | sed -n 's/^ *Host CPU: *//p' || true)"
[ -n "$cpu" ] || fail "llc-15 did not name the host CPU"
# A CPU newer than LLVM 15 has no model name there ("(unknown)"), and PoCL's
# configure stops without one: name the newest x86-64 model whose features
# this CPU has (PoCL's runtime, finding no name either, uses the one it was
# built for).
llc_host_cpu=()
if [ "$cpu" = "(unknown)" ] || [ "$cpu" = generic ]; then
  [ "$(uname -m)" = x86_64 ] || fail "llc-15 does not know this CPU and it is not x86-64"
  flags=" $(sed -n 's/^flags[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1) "
  has() { for f in "$@"; do [[ "$flags" == *" $f "* ]] || return 1; done; }
  if has avx512f avx512bw avx512dq avx512vl avx512cd; then cpu=skylake-avx512
  elif has avx2 fma bmi2 movbe; then cpu=haswell
  elif has sse4_2 popcnt; then cpu=nehalem
  else cpu=x86-64
  fi
  llc_host_cpu=(-DLLC_HOST_CPU="$cpu")
  echo "il-driver: llc-15 does not know this CPU's model; building for $cpu, whose features it has" >&2
fi
tag="$version-$cpu"
icd_dir="$dir/icd"
stamp="$dir/STAMP"
if [ "$(cat "$stamp" 2>/dev/null)" = "$tag" ] && [ -f "$icd_dir/pocl-il.icd" ]; then
  echo "$icd_dir"
  exit 0
fi

mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9 # one build at a time when several runs share the directory
if [ "$(cat "$stamp" 2>/dev/null)" = "$tag" ] && [ -f "$icd_dir/pocl-il.icd" ]; then
  echo "$icd_dir"
  exit 0
fi
work="$dir/work-$tag"
prefix="$dir/$tag"
old="$(cat "$stamp" 2>/dev/null || true)"
rm -rf "$work" "$prefix" "$stamp" "$icd_dir" ${old:+"$dir/$old"}
mkdir -p "$work"
start=$(date +%s)
echo "il-driver: building PoCL $version (SPIR-V, kernel library for $cpu) in $work" >&2
tar -xJf "$tarball" -C "$work"
# The smallest configuration that loads SPIR-V: the host CPU devices with one
# kernel-library variant, no tests, examples, poclcc or headers. Without
# position-independent code the link of libpocl fails. Configured from its
# work directory: PoCL's configure leaves files in the directory it runs in.
(cd "$work" && cmake -S "$work/pocl" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DWITH_LLVM_CONFIG="$llvm_config" \
  -DENABLE_SPIRV=ON -DLLVM_SPIRV="$spirv" -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DKERNELLIB_HOST_CPU_VARIANTS=native -DENABLE_ICD=ON -DPOCL_ICD_ABSOLUTE_PATH=ON \
  -DENABLE_TESTS=OFF -DENABLE_EXAMPLES=OFF -DENABLE_POCLCC=OFF \
  -DINSTALL_OPENCL_HEADERS=OFF "${llc_host_cpu[@]}" >"$work/configure.log" 2>&1) ||
  fail "PoCL's configure failed; its output: $work/configure.log"
nice cmake --build "$work/build" -j "${KCACHE_IL_DRIVER_JOBS:-$(nproc)}" >"$work/build.log" 2>&1 ||
  fail "PoCL's build failed; its output: $work/build.log"
cmake --install "$work/build" >"$work/install.log" 2>&1 ||
  fail "PoCL's install failed; its output: $work/install.log"
lib="$(find "$prefix" -name 'libpocl.so.*' -type f | head -n 1)"
[ -n "$lib" ] || fail "no libpocl.so under $prefix after the install"
mkdir -p "$icd_dir"
echo "$lib" >"$icd_dir/pocl-il.icd"
rm -rf "$work"
echo "$tag" >"$stamp"
echo "il-driver: built in $(($(date +%s) - start)) s into $prefix" >&2
echo "$icd_dir"
