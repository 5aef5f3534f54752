#pragma once
// Where an installed kcache keeps its read-only packs, shared by the runtime
// and the CLI so that both name the same places.

#include <filesystem>
#include <vector>

namespace kcache::service {

// The installed pack directories, in search order: <prefix>/share/kcache/packs
// found relative to the binary holding this code (so an unpacked or moved
// tree works), then the configured install prefix's. Either may not exist.
std::vector<std::filesystem::path> installed_pack_dirs();

}  // namespace kcache::service
