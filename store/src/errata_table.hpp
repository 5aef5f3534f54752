#pragma once
// Reading a pack's errata document through a connection already open.

#include <string>

#include "kcache/store/pack_errata.hpp"
#include "sqlite.hpp"

namespace kcache::store::errata_table {

// The document of `db`'s kcache_errata table ("" when it has no such table
// or no row); `path` names the file in errors (Corrupt: more than one row,
// or a document over the bound).
Result<std::string, StoreError> read(sql::Db& db, const std::string& path);

}  // namespace kcache::store::errata_table
