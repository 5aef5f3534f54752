#!/usr/bin/env bash
# Usage: check_database_opens.sh SOURCE_DIR
# kcache opens no descriptor of an SQLite database file (store.sqlite, its
# -wal/-shm/-journal) outside SQLite: closing any descriptor of a file drops
# every POSIX lock the process holds on it, so another process may delete
# the WAL this one still commits into (docs/design.md, "Storage").
#  - In the store module (store/), every raw open is on the list below,
#    with the reason it never opens a database file.
#  - Elsewhere, a file that names the store's database has no raw open at all
#    unless listed.
set -euo pipefail
src=$1
cd "$src"

opens='(^|[^A-Za-z0-9_])::(open|openat|creat)\(|\bfopen\(|std::[io]?fstream|\bopen_regular_file\(|\bread_regular_file\(|copy_file|fs::copy\(|std::filesystem::copy\(|sqlite3_backup|sha256_file_hex\(|mkstemp'
py_opens='(^|[^.A-Za-z0-9_])open\(|shutil\.copy|os\.open\('
names='kStoreFileName|store\.sqlite|db_path|\.sqlite|"-wal"|"-shm"|"-journal"|store(->|\.)path\(\)'

# path|text on the line|why it is not a database file
allowed='
store/src/hot/hot_copies.cpp|read_regular_file(dir / kStampName|the STAMP file under hot/
store/src/hot/hot_copies.cpp|read_regular_file(dir / kSecretName|the SECRET file under hot/ (the key of the tags of the copies)
store/src/hot/hot_copies.cpp|UniqueFd fd(::open(path.c_str(), O_RDONLY|a hot copy under hot/
store/src/hot/hot_copies.cpp|UniqueFd fd(::open(tmp.c_str(), O_WRONLY|a hot copy being written
store/src/hot/handover.cpp|read_regular_file(f, kMaxFileBytes|a write-back handed over by an earlier process (text)
store/src/store_open.cpp|UniqueFd fd(::mkstemp(tmp.data()));|a new store file'"'"'s private name, closed before any connection opens it
store/src/pack/pack.cpp|auto fd = open_regular_file(path);|a pack: read through this descriptor, immutable, no locks
store/src/trust.cpp|auto fd = open_regular_file(pack);|a pack: checked and read through this descriptor, immutable, no locks
store/src/trust.cpp|auto fd = open_regular_file(path);|a pack: checked and read through this descriptor, immutable, no locks
tools/src/commands/cmd_inspect.cpp|std::ofstream out(*output, std::ios::binary | std::ios::trunc);|get --output: a new file, refused when it exists
'

is_allowed() {  # file line
  local entry path text
  while IFS= read -r entry; do
    [ -n "$entry" ] || continue
    path=${entry%%|*}
    text=${entry#*|}
    text=${text%|*}
    if [ "$path" = "$1" ] && [[ "$2" == *"$text"* ]]; then
      return 0
    fi
  done <<< "$allowed"
  return 1
}

bad=0
files=$(git ls-files --cached --others --exclude-standard -- \
  'store/*' 'remote/*' 'sign/*' 'service/*' 'canary/*' 'observe/*' 'config/*' 'api/*' 'common/*' 'compiler/*' 'device_db/*' 'kernels/*' 'kernels_cl/*' 'tools/*' \
  'python/*' 'include/*' 'examples/*' | grep -E '\.(c|cc|cpp|h|hpp|py)$' || true)
for f in $files; do
  [ -f "$f" ] || continue
  if [[ "$f" == store/* ]]; then
    scope=store
  elif grep -qE "$names" "$f"; then
    scope=names
  else
    continue
  fi
  while IFS= read -r hit; do
    code=${hit#*:}
    [[ "$code" =~ ^[[:space:]]*(//|#) ]] && continue
    if ! is_allowed "$f" "$code"; then
      echo "$f:${hit%%:*}: a raw open in a file of the $scope rule:$code" >&2
      bad=1
    fi
  done < <(grep -nE "$([[ "$f" == *.py ]] && echo "$py_opens" || echo "$opens")" "$f" || true)
done
if [ "$bad" -ne 0 ]; then
  echo "Open database files only through SQLite (store/src/sqlite.hpp), or list" >&2
  echo "the open in tests/docs/check_database_opens.sh with why it is no database file." >&2
  exit 1
fi
echo "database files: opened only through SQLite"
