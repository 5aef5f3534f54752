#!/usr/bin/env bash
# Usage: run_deb_test.sh BUILD_DIR
# Builds the .deb with CPack, checks that its Depends name the package of
# every shared library its ELF files load, installs it with dpkg into an empty root of its
# own (dpkg --root: dpkg's checks and file list, without touching this
# machine's packages) when run as root, unpacks it into a staging root
# (dpkg -x) and runs the CLI from there: doctor, ls of the user store, ls of
# the installed pack (its SPIR-V entries too, under KCACHE_PACK_IL), and
# doctor by PATH as an unprivileged user.
set -euo pipefail
. "$(dirname "$0")/installed_pack.sh"
build=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/kcache-deb-XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log") || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/out/kcache_*.deb)
echo "package: $(basename "$deb") ($(stat -c %s "$deb") bytes)"
# The control fields carry the configured maintainer and home page.
cached() { sed -n "s/^$1:STRING=//p" "$build/CMakeCache.txt"; }
for field in Maintainer:KCACHE_PACKAGE_MAINTAINER Homepage:KCACHE_HOMEPAGE; do
  want=$(cached "${field#*:}")
  got=$(dpkg-deb -f "$deb" "${field%%:*}")
  [ -n "$want" ] && [ "$got" = "$want" ] ||
    { echo "${field%%:*} is '$got', configured '$want'"; dpkg-deb -I "$deb"; exit 1; }
done
# The package installs under the prefix the build was configured for.
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
dpkg -x "$deb" "$work/root"
root=$work/root
test -x "$root$prefix/bin/kcache"
test -x "$root$prefix/libexec/kcache/kcache-jit"
test -f "$root$prefix/include/kcache/kcache.h"
ls "$root$prefix"/lib/libkcache.so* >/dev/null
# The launchers' library, its headers and pkg-config file ship too.
ls "$root$prefix"/lib/libkcache-ops.so.* >/dev/null
test -f "$root$prefix/include/kcache/cl/launch.hpp"
test -f "$root$prefix/lib/pkgconfig/kcache-ops.pc"
# Each shared library a program or library of the package loads comes with
# the package itself or from a package its Depends names (this machine's
# owner of the library; the install in a fresh root tests the same by apt).
depends_names=$(dpkg-deb -f "$deb" Depends | tr ',|' '\n\n' | awk 'NF { print $1 }')
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
elves=$(find "$root" -type f -exec sh -c 'readelf -h "$1" >/dev/null 2>&1 && echo "$1"' _ {} \;)
[ "$(wc -l <<<"$elves")" -ge 4 ] || { echo "too few ELF files in the package: $elves"; exit 1; }
missing=""
# Also the libraries libkcache loads itself at run time (dlopen): their
# sonames are strings in it.
dlopened=$(strings -a "$root$prefix"/lib/libkcache.so.* | grep -E '^libcurl\.so\.[0-9]+$' | sort -u)
[ -n "$dlopened" ] || { echo "libkcache names no libcurl.so.N to load"; exit 1; }
for lib in $( (xargs -d '\n' readelf -d <<<"$elves" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; echo "$dlopened") | sort -u); do
  [ -z "$(find "$root" -name "$lib" -print -quit)" ] || continue
  owner=$(dpkg -S "$lib" 2>/dev/null | awk -v p="/$multiarch/$lib" \
    'substr($2, length($2) - length(p) + 1) == p { sub(/:.*/, "", $1); print $1; exit }')
  [ -n "$owner" ] || { echo "no package of this machine holds $lib, which the package loads"; exit 1; }
  grep -qxF "$owner" <<<"$depends_names" || missing+=" $owner ($lib)"
done
[ -z "$missing" ] ||
  { echo "Depends lacks:$missing"; dpkg-deb -f "$deb" Depends; exit 1; }
echo "Depends names the package of every library that the $(wc -l <<<"$elves") ELF files load"
# dpkg itself installs it into an empty root (dependencies are this
# machine's business, not that root's) and lists the copyright file as its own.
if [ "$(id -u)" -eq 0 ]; then
  droot=$work/dpkg-root
  mkdir -p "$droot/var/lib/dpkg/info" "$droot/var/lib/dpkg/updates"
  : >"$droot/var/lib/dpkg/status"
  dpkg --root="$droot" --force-depends --force-script-chrootless -i "$deb" >"$work/dpkg.log" 2>&1 ||
    { cat "$work/dpkg.log"; exit 1; }
  dpkg --root="$droot" -s kcache | grep -qx 'Status: install ok installed' ||
    { dpkg --root="$droot" -s kcache; exit 1; }
  dpkg --root="$droot" -L kcache | grep -x "$prefix/share/doc/kcache/copyright" >/dev/null ||
    { echo "dpkg does not list the copyright file"; exit 1; }
  test -x "$droot$prefix/bin/kcache"
  echo "dpkg -i into an empty root: installed"
fi
# The Debian copyright file, machine-readable (DEP-5), covering every file.
copyright=$root$prefix/share/doc/kcache/copyright
head -1 "$copyright" | grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
  { echo "no DEP-5 copyright file at $copyright"; exit 1; }
grep -qx 'Files: \*' "$copyright" && grep -q '^Copyright: ' "$copyright" && grep -q '^License: ' "$copyright" ||
  { echo "copyright file lacks Files/Copyright/License:"; cat "$copyright"; exit 1; }

export KCACHE_DIR=$work/store HOME=$work/home XDG_CACHE_HOME=$work/cache
unset KCACHE_JIT_PATH KCACHE_PACKS
"$root$prefix/bin/kcache" doctor >"$work/doctor.txt" || { cat "$work/doctor.txt"; exit 1; }
grep -q "$root$prefix/libexec/kcache/kcache-jit" "$work/doctor.txt" ||
  { echo "doctor does not find the staged kcache-jit"; cat "$work/doctor.txt"; exit 1; }
grep -q "$root$prefix/share/kcache/packs" "$work/doctor.txt" ||
  { echo "doctor does not name the staged pack directory"; cat "$work/doctor.txt"; exit 1; }
"$root$prefix/bin/kcache" ls
# The pack the build made (KCACHE_AOT_PACK), with SPIR-V per variant under KCACHE_PACK_IL.
check_installed_pack "$root$prefix/bin/kcache" "$root$prefix/share/kcache/packs" "$build"
# The Python package (when the build has it), imported from the staging root.
if grep -q '^KCACHE_PYTHON:BOOL=ON' "$build/CMakeCache.txt"; then
  pydir=$(sed -n 's/^KCACHE_PYTHON_INSTALL_DIR:STRING=//p' "$build/CMakeCache.txt")
  python=$(sed -n 's/^KCACHE_PYTHON_EXECUTABLE:INTERNAL=//p' "$build/CMakeCache.txt")
  ls "$root$prefix/$pydir"/kcache/_kcache*.so >/dev/null
  PYTHONPATH=$root$prefix/$pydir "$python" -c 'import kcache, sys
assert kcache.__file__.startswith(sys.argv[1]), kcache.__file__
with kcache.Cache() as c:
    print("python package from the .deb:", kcache.__file__, c.stats()["entries"], "entries")' \
    "$root$prefix/$pydir"
fi
# As a user would run it: by PATH, not as root, with a store of its own.
# doctor and devices must find the installed kcache-jit and pack directory.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  chmod 0711 "$work"
  user_home=$work/user
  mkdir -p "$user_home"
  chown 65534:65534 "$user_home"
  chmod 0700 "$user_home"
  as_user() {
    env -i PATH="$root$prefix/bin:/usr/bin:/bin" HOME="$user_home" KCACHE_DIR="$user_home/store" \
      setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
  }
  as_user kcache doctor >"$work/doctor-user.txt" 2>&1 || true
  grep -q "$root$prefix/share/kcache/packs" "$work/doctor-user.txt" ||
    { echo "kcache run by PATH does not name the installed pack directory"; cat "$work/doctor-user.txt"; exit 1; }
  grep -q "$root$prefix/libexec/kcache/kcache-jit" "$work/doctor-user.txt" ||
    { echo "kcache run by PATH does not find the installed kcache-jit"; cat "$work/doctor-user.txt"; exit 1; }
  echo "kcache by PATH as uid 65534: doctor names the installed pack directory and kcache-jit"
fi
echo "deb: ok"
