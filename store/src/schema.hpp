#pragma once
// The database schema, its version table, and migrations between versions.

#include <functional>
#include <string>

#include "kcache/store/types.hpp"
#include "sqlite.hpp"

namespace kcache::store::schema {

// The version this build reads and writes.
inline constexpr int kCurrentVersion = 3;

// Returns the schema version of `db`: 0 for an empty database (no version
// table); a corrupt error for a version table not holding 1 or more.
sql::Res<int> read_version(sql::Db& db);

// Creates the schema in an empty database or migrates an older one to
// kCurrentVersion, each in one transaction; refuses (SchemaTooNew) a newer
// one without writing to it. `path` only names the file in messages.
Status<StoreError> ensure_current(sql::Db& db, const std::string& path,
                                  const sql::RetryPolicy& retry);

// Returns the SchemaTooNew refusal for a file of schema `found` at `path`.
StoreError too_new(int found, const std::string& path);

// Returns the Foreign refusal for the SQLite file at `path` (open as `db`)
// that has no kcache schema: empty, or another program's tables.
StoreError not_a_store(sql::Db& db, const std::string& path);

// Checks that a database opened read-only has exactly kCurrentVersion;
// Foreign for a file without kcache's schema.
Status<StoreError> check_readable(sql::Db& db, const std::string& path);

// Opens the kcache file (a pack) at `path` for writing, checks it as
// check_readable does, and runs `body` in one transaction, committed only
// when `body` succeeds; every failure is a StoreError naming `path`.
Status<StoreError> write_in_transaction(const std::string& path,
                                        const std::function<sql::Stat(sql::Db&)>& body);

// Maps an SQLite error to a StoreError whose message names `path`.
StoreError to_store_error(const sql::SqlError& e, const std::string& path);

}  // namespace kcache::store::schema
