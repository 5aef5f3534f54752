#!/usr/bin/env bash
# Usage: check_dependency_table.sh SOURCE_DIR
# The README's table of Debian packages ("What scripts/setup.sh installs")
# names exactly the packages scripts/setup.sh installs.
set -euo pipefail
src=$1
# Both lists: packages=( (the main job) and test_packages=( (the tests).
installs=$(sed -n '/^\(test_\)\{0,1\}packages=(/,/^)/p' "$src/scripts/setup.sh" | grep -v '^\(test_\)\{0,1\}packages=(\|^)' |
  tr -s ' \t' '\n' | sed '/^$/d' | sort)
documented=$(sed -n '/^## What scripts\/setup.sh installs/,/^## /p' "$src/README.md" |
  sed -n 's/^| `\([^`]*\)` |.*/\1/p' | sort)
if [ -z "$installs" ] || [ -z "$documented" ]; then
  echo "cannot read the package list of scripts/setup.sh or the README's table" >&2
  exit 1
fi
if [ "$installs" != "$documented" ]; then
  echo "README table and scripts/setup.sh differ (< setup.sh only, > README only):" >&2
  diff <(echo "$installs") <(echo "$documented") >&2 || true
  exit 1
fi
echo "README table: the $(echo "$installs" | wc -l) packages of scripts/setup.sh"
