#pragma once
// The errata a pack carries: one JSON document (its grammar and meaning are
// the service's, kcache/canary/errata.hpp; the store keeps the text), in a
// table of the pack's SQLite file, so that the pack's signature covers it.
// A pack without the table carries no errata.
//
//   kcache_errata(document TEXT NOT NULL)   -- at most one row

#include <filesystem>
#include <string_view>

#include "kcache/common/result.hpp"
#include "kcache/store/types.hpp"

namespace kcache::store {

// The largest errata document a pack may carry.
inline constexpr std::size_t kMaxPackErrataBytes = 1u << 20;

// Replaces the errata document of the pack file at `pack` with `document`,
// in one transaction. Fails with Io (cannot open or write), Foreign (not a
// kcache pack), SchemaTooNew/SchemaTooOld or InvalidArgument (an empty
// document, or one over the bound).
Status<StoreError> write_pack_errata(const std::filesystem::path& pack, std::string_view document);

}  // namespace kcache::store
