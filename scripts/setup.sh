#!/usr/bin/env bash
# Installs every Debian package kcache needs (idempotent, non-interactive),
# then configures and builds into ./build. Safe to run again and again.
#   scripts/setup.sh            install what is missing, configure, build
#   KCACHE_BUILD_DIR=dir        build somewhere else (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake g++ make pkg-config git dpkg-dev file debootstrap
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd intel-opencl-icd clinfo
  libsqlite3-dev sqlite3 libzstd-dev libxxhash-dev libssl-dev
  nlohmann-json3-dev libgtest-dev libbenchmark-dev clang-format clang-14 libclang-rt-14-dev
  libcurl4-openssl-dev nginx-light apache2 openssl minisign
  pybind11-dev python3-dev python3-pyopencl python3-numpy python3-pytest
  redis-server libhiredis-dev clpeak clblast-utils abigail-tools python3-prometheus-client
  rclone mesa-opencl-icd hashcat
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#packages[@]} packages present"
fi

# The S3-protocol server the S3 tests start: s3rver, from npm (the fork
# published as @20minutes/s3rver; the s3rver package itself skips checking
# SigV4 signatures), installed into git-ignored .deps/s3rver.
s3rver_dir=.deps/s3rver
s3rver_version=4.0.4
if ! grep -qs "\"version\": \"$s3rver_version\"" "$s3rver_dir/node_modules/@20minutes/s3rver/package.json"; then
  command -v npm >/dev/null || { echo "setup: npm is needed for the S3 tests' server (s3rver)" >&2; exit 1; }
  echo "setup: installing @20minutes/s3rver@$s3rver_version into $s3rver_dir"
  npm install --prefix "$s3rver_dir" --no-audit --no-fund --loglevel=error "@20minutes/s3rver@$s3rver_version"
fi

build_dir="${KCACHE_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKCACHE_WERROR=ON
cmake --build "$build_dir" -j "$(nproc)"
