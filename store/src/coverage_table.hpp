#pragma once
// Reading a pack's coverage table through a connection already open.

#include <string>
#include <vector>

#include "kcache/store/coverage.hpp"
#include "sqlite.hpp"

namespace kcache::store::coverage {

// The records of `db`'s kcache_aot_coverage table (none when it has no such
// table); `path` names the file in errors.
Result<std::vector<AotCoverage>, StoreError> read_table(sql::Db& db, const std::string& path);

}  // namespace kcache::store::coverage
