#pragma once
// The AOT coverage table of a pack: for each device family the prebuild was
// asked for, whether the pack holds its binaries or why not. A family the
// installed ocloc cannot target (Meteor Lake, 0x7d55, with ocloc 22.43) is
// recorded as `not_targetable`, so that the runtime knows at once that it
// must JIT there instead of searching the pack.
//
// Table (in the pack's SQLite file, next to the store's own tables):
//   kcache_aot_coverage(family TEXT PRIMARY KEY, ocloc_target TEXT NOT NULL,
//                       status TEXT NOT NULL,   -- covered | not_targetable | failed
//                       pci_ids TEXT NOT NULL,  -- "0x7d40,0x7d55,…" (may be empty)
//                       compiler TEXT NOT NULL, -- ocloc identity string
//                       detail TEXT NOT NULL)   -- why, for people

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"

namespace kcache::cli {

enum class CoverageStatus { covered, not_targetable, failed };

const char* to_string(CoverageStatus s);

struct CoverageRecord {
    std::string family;
    std::string ocloc_target;
    CoverageStatus status = CoverageStatus::covered;
    std::vector<std::uint32_t> pci_ids;
    std::string compiler;
    std::string detail;
};

// Adds the coverage table holding `records` to the pack file at `pack`.
// Error: a message naming the file and SQLite's complaint.
Status<std::string> write_coverage(const std::filesystem::path& pack,
                                   const std::vector<CoverageRecord>& records);

// Returns the coverage records of `pack` (empty when it has no such table).
Result<std::vector<CoverageRecord>, std::string> read_coverage(const std::filesystem::path& pack);

}  // namespace kcache::cli
