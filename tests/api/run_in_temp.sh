#!/usr/bin/env bash
# Usage: run_in_temp.sh PROGRAM [ARG...]: runs PROGRAM with a store and a
# PoCL cache of its own in a temporary directory (removed afterwards).
set -euo pipefail
work=$(mktemp -d "${TMPDIR:-/tmp}/kcache-api-XXXXXX")
trap 'rm -rf "$work"' EXIT
# The driver canary (its own tests cover it) would add seconds to a first request.
KCACHE_DIR=$work/store POCL_CACHE_DIR=$work/pocl KCACHE_CANARY=off "$@"
