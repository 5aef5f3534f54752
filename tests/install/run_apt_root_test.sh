#!/usr/bin/env bash
# Usage: run_apt_root_test.sh BUILD_DIR [DEB]
# Installs the .deb as a user of a fresh Debian machine does: debootstrap
# makes a minimal root of this machine's Debian release from the mirror this
# machine's apt uses, and apt-get in that root installs the package with what
# its control fields pull in (nothing is named by hand). Then, as an ordinary
# user of that root, by PATH in a login shell: `kcache --help`, `kcache doctor`
# names the installed pack, `kcache warm` twice (the second builds nothing)
# and `python3 -c 'import kcache'`.
# DEB: a package to test instead of the one CPack makes from BUILD_DIR.
# It needs root (debootstrap, chroot, mount) and the mirror: without either it
# fails and says so; it never passes without having installed and run.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [DEB]" >&2; exit 1; }
build=$(cd "$1" && pwd)
. "$(dirname "$0")/fresh_root.sh"

# The package under test.
if [ $# -ge 2 ]; then
  deb=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
else
  (cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) ||
    { cat "$work/cpack.log"; tail -n 30 "$work"/out/_CPack_Packages/*/DEB/PreinstallOutput.log 2>/dev/null
      fail "cpack -G DEB failed"; }
  deb=$(ls "$work"/out/kcache_*.deb)
fi
[ -f "$deb" ] || fail "no package at $deb"
echo "package: $(basename "$deb"); its relations:"
dpkg-deb -f "$deb" Depends Recommends Suggests | sed 's/^/  /'

# A fresh minimal root from the mirror (about 2 GB with the package).
fresh_root_bootstrap 4g

# apt installs the package and what its Depends and Recommends name.
cp "$deb" "$root/tmp/"
before=$(in_root 60 dpkg-query -W -f='${Package}\n' | wc -l)
in_root 400 apt-get install -y "/tmp/$(basename "$deb")" >"$work/apt-install.log" 2>&1 ||
  { cat "$work/apt-install.log"; fail "apt-get install of the package failed in a fresh root"; }
after=$(in_root 60 dpkg-query -W -f='${Package}\n' | wc -l)
grep -E '^(After this operation|Need to get)' "$work/apt-install.log" | sed 's/^/apt: /'
sed -n '/^The following NEW packages/,/^[0-9]* upgraded/p' "$work/apt-install.log" | sed '1d;$d' |
  fmt -w 100 | sed 's/^ */apt: new: /'
echo "apt: $((after - before)) packages installed with kcache (root: $(du -sh --one-file-system "$root" | cut -f1)), $(elapsed)"
in_root 60 dpkg-query -W -f='${Status}' kcache | grep -qx 'install ok installed' ||
  fail "kcache is not installed in the root after apt-get install"
files=$(in_root 60 dpkg -L kcache)
cli=$(grep -m1 '/bin/kcache$' <<<"$files") || fail "the package has no bin/kcache"
prefix=${cli%/bin/kcache}

# An ordinary user, a login shell: PATH and HOME as such a user has them.
in_root 60 useradd -m -s /bin/bash kuser
as_user() { # NAME COMMAND: runs COMMAND, its output in $work/NAME.txt
  timeout -k 10 240 chroot "$root" su -l kuser -c "$2" >"$work/$1.txt" 2>&1
}
as_user help 'kcache --help' || { cat "$work/help.txt"; fail "kcache --help by PATH as a user failed"; }
grep -q 'doctor' "$work/help.txt" || { cat "$work/help.txt"; fail "kcache --help does not list the commands"; }
echo "kcache --help by PATH as a user: ok"

# doctor finds no problem and reports each installed pack the runtime opens
# (a build without a pack: it names the pack directory).
as_user doctor 'kcache doctor' || { cat "$work/doctor.txt"; fail "kcache doctor as a user failed"; }
packs=$(grep '\.kcpack$' <<<"$files" || true)
if [ -n "$packs" ]; then
  for pack in $packs; do
    grep -qF "packs.$pack: " "$work/doctor.txt" ||
      { cat "$work/doctor.txt"; fail "kcache doctor does not report the installed pack $pack"; }
  done
  echo "kcache doctor reports the installed pack(s): $packs"
else
  grep -qF "$prefix/share/kcache/packs" "$work/doctor.txt" ||
    { cat "$work/doctor.txt"; fail "kcache doctor does not name $prefix/share/kcache/packs"; }
  echo "kcache doctor names $prefix/share/kcache/packs (this build has no pack)"
fi

# The OpenCL device for warm (PoCL) comes with the package's relations, not by hand.
# grep reads the whole list (no -q): under pipefail, apt-mark cut off by
# SIGPIPE once grep -q had its match failed the check on a loaded machine.
in_root 60 apt-mark showauto | grep -x pocl-opencl-icd >/dev/null ||
  fail "apt did not pull in pocl-opencl-icd with the package (its Recommends)"

# warm twice: the first builds (or finds) every variant on PoCL, the second builds nothing.
summary() { # NAME: the numbers of the warm summary line, or fails
  sed -n 's/^warm: \([0-9]*\) built, \([0-9]*\) already cached, [0-9]* unsupported, \([0-9]*\) failed, \([0-9]*\) timed out.* (\([0-9]*\) devices*)$/\1 \2 \3 \4 \5/p' \
    "$work/$1.txt" | tail -n 1
}
as_user warm1 'kcache warm' || { cat "$work/warm1.txt"; fail "the first kcache warm failed"; }
counts=$(summary warm1)
read -r built1 cached1 failed1 timedout1 devices1 <<<"$counts"
[ -n "$counts" ] ||
  { cat "$work/warm1.txt"; fail "no summary line from the first kcache warm"; }
[ "$devices1" -ge 1 ] && [ $((built1 + cached1)) -gt 0 ] && [ "$failed1" -eq 0 ] && [ "$timedout1" -eq 0 ] ||
  { cat "$work/warm1.txt"; fail "the first kcache warm found no device, did nothing or failed"; }
echo "first warm: $(grep '^warm:' "$work/warm1.txt") ($(elapsed))"
as_user warm2 'kcache warm' || { cat "$work/warm2.txt"; fail "the second kcache warm failed"; }
counts=$(summary warm2)
read -r built2 cached2 failed2 timedout2 devices2 <<<"$counts"
[ -n "$counts" ] ||
  { cat "$work/warm2.txt"; fail "no summary line from the second kcache warm"; }
[ "$built2" -eq 0 ] && [ "$cached2" -eq $((built1 + cached1)) ] && [ "$failed2" -eq 0 ] && [ "$timedout2" -eq 0 ] &&
  [ "$devices2" -eq "$devices1" ] ||
  { cat "$work/warm2.txt"; fail "the second kcache warm built again: $built2 built, $cached2 cached"; }
echo "second warm: $(grep '^warm:' "$work/warm2.txt")"

# The Python package, from the installed tree, for the system python3.
init=$(grep -m1 '/kcache/__init__\.py$' <<<"$files" || true)
if [ -n "$init" ]; then
  as_user python 'python3 -c "import kcache; print(kcache.__file__)
with kcache.Cache() as c: print(c.stats()[\"entries\"], \"entries\")"' ||
    { cat "$work/python.txt"; fail "python3 -c 'import kcache' as a user failed"; }
  head -n 1 "$work/python.txt" | grep -qxF "$init" ||
    { cat "$work/python.txt"; fail "python3 imported kcache from elsewhere than $init"; }
  echo "python3 -c 'import kcache' as a user: $(tr '\n' ' ' <"$work/python.txt")"
fi

# The package alone makes its library loadable by its soname (what a program
# linked with -lkcache asks the loader for): removed, the loader's cache
# rebuilt without it, then installed again by dpkg with nothing else (no
# other package's ldconfig run), and the loader still finds it.
soname=$(grep -m1 -o 'libkcache\.so\.[0-9]*$' <<<"$files") || fail "the package has no libkcache.so.N"
in_root 60 dpkg -r kcache >"$work/dpkg.log" 2>&1 && in_root 60 ldconfig &&
  in_root 60 dpkg -i "/tmp/$(basename "$deb")" >>"$work/dpkg.log" 2>&1 ||
  { cat "$work/dpkg.log"; fail "dpkg -r, then dpkg -i of the package failed"; }
load="python3 -c 'import ctypes; ctypes.CDLL(\"$soname\")'"
[ -n "$init" ] || load="/sbin/ldconfig -p | grep -F '$soname '" # no Python in this build
as_user dlopen "$load" ||
  { cat "$work/dlopen.txt"; fail "the loader does not find $soname after dpkg -i of the package alone"; }
echo "dpkg -i of the package alone: the loader finds $soname"
echo "apt root: ok ($(elapsed))"
