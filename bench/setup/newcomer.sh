#!/usr/bin/env bash
# Usage: bench/setup/newcomer.sh [SOURCE_DIR]
# A new user's first run, timed: in a fresh minimal Debian root (the tests'
# tests/install/fresh_root.sh: needs root and the mirror), `git clone` of
# SOURCE_DIR (default: this tree's repository, its HEAD), then the README's
# main job, `scripts/setup.sh && build/tools/kcache warm`, as root in the
# root. Prints the time of each step and of the whole, from the clone to the
# first warm summary (apt and the build included; the bootstrap of the root,
# the part of the machine a user already has, not).
set -euo pipefail
src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
. "$src/tests/install/fresh_root.sh"
fresh_root_bootstrap 6g
git clone -q --no-local "$src" "$root/src/kcache"
in_root 60 apt-get install -y -qq git >/dev/null 2>&1 || true  # a user who cloned has git
step() { # NAME COMMAND: runs COMMAND in the root, prints its seconds
  local t0=$SECONDS
  in_root 3000 bash -c "cd /src/kcache && $2" >"$work/$1.log" 2>&1 ||
    { tail -n 30 "$work/$1.log"; fail "$1 failed in the fresh root"; }
  echo "$1: $((SECONDS - t0)) s"
}
t0=$SECONDS
step setup 'scripts/setup.sh'
step warm 'build/tools/kcache warm'
echo "newcomer: $((SECONDS - t0)) s from the clone to the first warm summary ($(nproc) CPUs)"
grep '^warm:' "$work/warm.log"
