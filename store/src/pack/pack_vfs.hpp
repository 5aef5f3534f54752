#pragma once
// Packs are read through the descriptor their checks were made over, never
// reopened by name: an SQLite VFS ("kcache-pinned") whose main database
// file is a duplicate of a descriptor the caller already holds. Everything
// else (temporary files, names, time) goes to the default VFS.

#include <string>

namespace kcache::store::pinned {

// The SQLite URI that opens, read-only and immutable, exactly the file open
// at `fd` (the caller keeps `fd` open until sqlite3_open_v2 returns; SQLite
// reads from its own duplicate after that). `name` is the path SQLite
// reports in its messages.
std::string uri(const std::string& name, int fd);

}  // namespace kcache::store::pinned
