#!/usr/bin/env bash
# Fails (and names the files) when a tracked C/C++ file is not clang-formatted.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=()
while IFS= read -r f; do
  [ -f "$f" ] || continue
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.hpp' '*.h')
if [ "${#bad[@]}" -gt 0 ]; then
  echo "not clang-formatted (run clang-format -i on them):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "format: ok"
