#!/usr/bin/env bash
# Installs the Debian packages kcache needs (idempotent, non-interactive),
# then configures and builds into ./build. Safe to run again and again.
#   scripts/setup.sh            install what is missing, configure, build what
#                               the main job runs (target kcache_main: the CLI,
#                               the libraries, the helpers, the layer, the Python
#                               module, the installed pack)
#   scripts/setup.sh --all      also install what the tests use, and build
#                               everything (tests, benchmarks, fuzz replays)
#   scripts/setup.sh --deps     install what the main job and the tests use,
#                               and build nothing
#   KCACHE_BUILD_DIR=dir        build somewhere else (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."

stage=main
case "${1:-}" in
  "") ;;
  --all) stage=all ;;
  --deps) stage=deps ;;
  -h | --help) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "setup: unknown argument '$1' (--all, --deps or none; --help)" >&2; exit 2 ;;
esac

# What the main job builds and runs with (the libraries, the CLI, the helpers,
# the layer, the Python module, the installed pack made with ocloc).
packages=(
  cmake g++ make pkg-config git
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd intel-opencl-icd clinfo
  libsqlite3-dev libzstd-dev libxxhash-dev libssl-dev nlohmann-json3-dev libgtest-dev
  libcurl4-openssl-dev libhiredis-dev pybind11-dev python3-dev python3-numpy
)
# What only the tests, the benchmarks and CI use (--all and --deps).
test_packages=(
  dpkg-dev file debootstrap sqlite3 libbenchmark-dev clang-format clang-14 libclang-rt-14-dev llvm-14
  nginx-light libnginx-mod-http-dav-ext apache2 openssl minisign redis-server rclone
  python3-pyopencl python3-pytest python3-prometheus-client
  clpeak clblast-utils hashcat abigail-tools mesa-opencl-icd
  llvm-spirv-14 pocl-source llvm-15-dev libclang-15-dev libclang-cpp15-dev libhwloc-dev llvm-spirv-15
)

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null ||
    { echo "setup: not root and no sudo: run scripts/setup.sh as root, or install sudo" >&2; exit 1; }
  sudo="sudo"
fi
apt_updated=""
# apt-get waits up to 5 minutes for a dpkg lock another apt holds (an
# unattended upgrade, say) instead of failing at once.
apt_get() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 "$@"; }
# apt_install PACKAGE...: installs them; when apt fails, tries each alone and
# names the ones that cannot be installed.
apt_install() {
  [ -n "$apt_updated" ] || { apt_get update -qq; apt_updated=1; }
  echo "setup: installing $*"
  apt_get install -y -qq --no-install-recommends "$@" && return 0
  local p failed=()
  for p in "$@"; do
    apt_get install -y -qq --no-install-recommends "$p" ||
      failed+=("$p")
  done
  [ "${#failed[@]}" -eq 0 ] ||
    { echo "setup: apt-get could not install: ${failed[*]} (its messages are above)" >&2; exit 1; }
}

wanted=("${packages[@]}")
[ "$stage" = main ] || wanted+=("${test_packages[@]}")
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  apt_install "${missing[@]}"
else
  echo "setup: all ${#wanted[@]} packages present"
fi

# The S3-protocol server the S3 tests start: s3rver, from npm (the fork
# published as @20minutes/s3rver; the s3rver package itself skips checking
# SigV4 signatures), installed into git-ignored .deps/s3rver. npm comes from
# Debian only when the machine has none: a Node.js from elsewhere may bundle
# npm and conflict with Debian's npm package, and one that works is kept.
npm_works() { command -v npm >/dev/null && npm --version >/dev/null 2>&1; }
s3rver_dir=.deps/s3rver
s3rver_version=4.0.4
if [ "$stage" != main ] && ! grep -qs "\"version\": \"$s3rver_version\"" "$s3rver_dir/node_modules/@20minutes/s3rver/package.json"; then
  if ! npm_works; then
    command -v node >/dev/null || apt_install nodejs
    npm_works || apt_install npm
    npm_works || { echo "setup: no working npm after installing Debian's nodejs and npm" >&2; exit 1; }
  fi
  echo "setup: installing @20minutes/s3rver@$s3rver_version into $s3rver_dir"
  npm install --prefix "$s3rver_dir" --no-audit --no-fund --loglevel=error "@20minutes/s3rver@$s3rver_version" ||
    { echo "setup: npm could not install @20minutes/s3rver@$s3rver_version (is the npm registry reachable?)" >&2; exit 1; }
fi
[ "$stage" = deps ] && exit 0

build_dir="${KCACHE_BUILD_DIR:-build}"
# Optimised, with line tables only (-g1): backtraces and sanitizer reports
# name files and lines, and the build takes about a third less time than
# with full debug information (-g). For a debugger, configure a build of
# your own with -DCMAKE_BUILD_TYPE=Debug.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKCACHE_WERROR=ON \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
if [ "$stage" = all ]; then
  cmake --build "$build_dir" -j "$(nproc)"
else
  cmake --build "$build_dir" -j "$(nproc)" --target kcache_main
fi
