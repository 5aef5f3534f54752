#!/usr/bin/env bash
# Usage: run_setup_deps_test.sh SOURCE_DIR
# A new user's machine: in a fresh minimal Debian root (fresh_root.sh), a
# clean copy of the tree (its tracked files and the untracked ones git does
# not ignore) runs `scripts/setup.sh --deps` as root, and then every program
# that the build, the tests and CI call must be found by PATH, with the Python
# modules the tests import, the S3 tests' server and an OpenCL device. Only
# the dependency stage runs (no build). It fails, never skips, without root
# or the mirror.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 SOURCE_DIR" >&2; exit 1; }
src=$(cd "$1" && pwd)
. "$(dirname "$0")/fresh_root.sh"
command -v git >/dev/null || fail "git is not installed (scripts/setup.sh installs it)"

# setup.sh installs about 1,000 packages (some 3.5 GB unpacked).
fresh_root_bootstrap 7g
mkdir -p "$root/src/kcache"
(cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 -r ls -d 2>/dev/null |
  tar -cf - -T -) | tar -xf - -C "$root/src/kcache"
echo "tree copied: $(find "$root/src/kcache" -type f | wc -l) files"
in_root 1500 bash -c 'cd /src/kcache && scripts/setup.sh --deps' >"$work/setup.log" 2>&1 ||
  { tail -n 40 "$work/setup.log"; echo "apt's errors, each once:"; grep '^E: ' "$work/setup.log" | sort | uniq -c | head -n 20
    fail "scripts/setup.sh --deps failed in a fresh root ($(elapsed))"; }
echo "setup.sh --deps: ok in $(elapsed); $(in_root 60 dpkg-query -W -f='${Package}\n' | wc -l) packages in the root"

# What the build, the tests, the benchmarks and CI run, by the name they use.
programs=(
  bash git cmake ctest cpack make g++ gcc cc c++ pkg-config dpkg-shlibdeps file nm readelf objdump ldd
  clang-14 clang++-14 clang-format-14 clang-format llvm-symbolizer-14 abidw abidiff
  llvm-spirv-14 llvm-spirv-15 llvm-config-15 llc-15 flock xz
  python3 pytest-3 sqlite3 openssl minisign clinfo ocloc clpeak clblast_tuner_xgemm hashcat
  nginx apache2 redis-server redis-cli rclone node npm
  debootstrap chroot mount umount apt-get dpkg-deb timeout taskset su useradd tar awk sed
)
missing=()
for p in "${programs[@]}"; do
  in_root 30 bash -c "command -v '$p'" >/dev/null || missing+=("$p")
done
[ "${#missing[@]}" -eq 0 ] || fail "not found by PATH after setup.sh --deps: ${missing[*]}"
echo "all ${#programs[@]} programs found"

in_root 60 python3 -c 'import pyopencl, numpy, pytest, prometheus_client' >"$work/python.txt" 2>&1 ||
  { cat "$work/python.txt"; fail "a Python module the tests import is missing"; }
in_root 30 test -f /src/kcache/.deps/s3rver/node_modules/@20minutes/s3rver/package.json ||
  fail "setup.sh --deps did not install s3rver into .deps/s3rver"
in_root 30 test -f /usr/src/pocl.tar.xz ||
  fail "setup.sh --deps did not install pocl-source (scripts/il-driver.sh builds it)"
in_root 60 clinfo -l >"$work/clinfo.txt" 2>&1 || { cat "$work/clinfo.txt"; fail "clinfo -l failed"; }
grep -q 'Portable Computing Language' "$work/clinfo.txt" ||
  { cat "$work/clinfo.txt"; fail "no PoCL platform in the fresh root"; }
echo "Python modules, s3rver and the PoCL platform: ok; fresh root: ok ($(elapsed))"
