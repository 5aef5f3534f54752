#pragma once
// What a warm manifest's items are in a store: `kcache export --manifest`
// bundles exactly those binaries.

#include <string>
#include <vector>

#include "kcache/store/store.hpp"
#include "manifest.hpp"

namespace kcache::cli {

// The keys of `entries` built from one of `items` (the same source, options
// and entry points; on a device the item names, when it names any). Items
// that match no entry are named in `unmatched`; an item whose registry
// kernel or parameters are unknown in `unknown`.
std::vector<store::Key> manifest_entry_keys(const std::vector<ManifestItem>& items,
                                            const std::vector<store::EntryInfo>& entries,
                                            std::vector<std::string>& unmatched,
                                            std::vector<std::string>& unknown);

}  // namespace kcache::cli
