# Sourced by the install tests' scripts (bash, set -euo pipefail): what each
# does first. Not executable on its own.

# install_to_temp_prefix BUILD TAG: makes a temporary directory named after
# TAG, removed when the script exits, and runs `cmake --install BUILD` into
# its prefix/ (the log in install.log there). Sets `work` and `prefix`.
install_to_temp_prefix() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/$2-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  prefix=$work/prefix
  cmake --install "$1" --prefix "$prefix" >"$work/install.log"
}
