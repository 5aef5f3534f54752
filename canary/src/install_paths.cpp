// Where an installed kcache keeps its read-only packs (install_paths.hpp).

#include "kcache/canary/install_paths.hpp"

#include "kcache/common/own_path.hpp"

namespace kcache::service {

std::vector<std::filesystem::path> installed_pack_dirs() {
    std::vector<std::filesystem::path> dirs;
    if (auto image = own_image_path(reinterpret_cast<const void*>(&installed_pack_dirs));
        !image.empty()) {
        dirs.push_back((image.parent_path() / KCACHE_PACK_RELATIVE_DIR).lexically_normal());
    }
    std::filesystem::path configured(KCACHE_PACK_DIR);
    if (dirs.empty() || dirs.front() != configured) {
        dirs.push_back(std::move(configured));
    }
    return dirs;
}

}  // namespace kcache::service
