#pragma once
// Safety of the cache directory and of the database file inside it.

#include <filesystem>
#include <string>

#include "kcache/common/result.hpp"
#include "kcache/store/types.hpp"
#include "sqlite.hpp"

namespace kcache::store::files {

enum class Writable { yes, no };

// Creates `dir` (mode 0700, parents as needed) or checks an existing one
// (following a symlink): it must be a directory owned by the effective user
// and not writable by group or others, and every existing directory above it
// must be owned by root or the user and not writable by others unless sticky
// (checked before anything is created). Returns whether it can be written
// (No on a read-only file system or without write permission); an
// UnsafeDirectory or Io error naming the path and the fix otherwise.
Result<Writable, StoreError> prepare_cache_dir(const std::filesystem::path& dir);

// Returns whether the existing file `path` can be written by this process.
Writable file_writable(const std::filesystem::path& path);

// Returns what is wrong with the header of the existing database file `db`
// (not SQLite, truncated, garbage), or an empty string when it looks sound.
// Reads it through `conn`, a connection to `db` that has not read it yet:
// no descriptor of kcache's is opened on it (sqlite.hpp, Db::read_file).
std::string header_problem(sql::Db& conn, const std::filesystem::path& db);

// Renames `db` and its -wal/-shm companions to `<name>.corrupt-<UTC time>`
// and logs a warning with `why`; returns the new name of the database.
Result<std::filesystem::path, StoreError> move_aside(const std::filesystem::path& db,
                                                     const std::string& why);

}  // namespace kcache::store::files
