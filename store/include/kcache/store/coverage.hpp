#pragma once
// The AOT coverage table of a pack: for each device family a prebuild was
// asked for, whether the pack holds its binaries or why not. A family the
// installed ocloc cannot target (Meteor Lake, 0x7d55, with ocloc 22.43) is
// recorded as NotTargetable, so that the runtime knows at once that it must
// JIT there instead of searching the pack (TieredStore::aot_coverage).
//
// Table, in the pack's SQLite file next to the store's own tables; a pack made
// by export has none:
//   kcache_aot_coverage(family TEXT PRIMARY KEY, ocloc_target TEXT NOT NULL,
//                       status TEXT NOT NULL,   -- covered | not_targetable | failed
//                       pci_ids TEXT NOT NULL,  -- "0x7d40,0x7d55,…" (may be empty)
//                       compiler TEXT NOT NULL, -- ocloc identity string
//                       detail TEXT NOT NULL)   -- why, for people

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/store/types.hpp"

namespace kcache::store {

enum class CoverageStatus { covered, not_targetable, failed };

// "covered", "not_targetable", "failed": the table's text.
const char* to_string(CoverageStatus status);
std::optional<CoverageStatus> parse_coverage_status(std::string_view text);

struct AotCoverage {
    std::string family;        // device-database family name ("mtl-h")
    std::string ocloc_target;  // the target the AOT keys name ("mtl-h")
    CoverageStatus status = CoverageStatus::covered;
    std::vector<std::uint32_t> pci_ids;
    std::string compiler;
    std::string detail;
};

// Adds `records` to the coverage table of the pack file at `pack` (a record of
// the same family replaces the earlier one), in one transaction.
// Fails with Io (cannot open or write), InvalidArgument (an empty family),
// Foreign (not a kcache pack) or SchemaTooNew/SchemaTooOld; writes nothing then.
Status<StoreError> write_aot_coverage(const std::filesystem::path& pack,
                                      const std::vector<AotCoverage>& records);

// Returns the coverage records of the pack file at `pack`, by family name
// (empty when it has no table). Fails with Io/Corrupt, or Corrupt naming the
// row when a status is not one of the three.
Result<std::vector<AotCoverage>, StoreError> read_aot_coverage(const std::filesystem::path& pack);

}  // namespace kcache::store
