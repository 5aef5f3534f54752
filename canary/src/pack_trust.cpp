// Pack discovery and the signature policy as the runtime applies it.

#include "kcache/canary/pack_trust.hpp"

#include <algorithm>

#include "kcache/canary/install_paths.hpp"

namespace kcache::service {
namespace fs = std::filesystem;

std::vector<fs::path> pack_files(const std::vector<fs::path>& paths) {
    std::vector<fs::path> files;
    for (const auto& p : paths) {
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
                if (it->path().extension() == ".kcpack") {
                    files.push_back(it->path());
                }
            }
        } else if (fs::exists(p, ec)) {
            files.push_back(p);
        }
    }
    std::sort(files.begin(), files.end());
    files.erase(std::unique(files.begin(), files.end()), files.end());
    return files;
}

std::vector<fs::path> runtime_pack_files(const Config& config) {
    auto paths = config.packs;
    for (auto& d : installed_pack_dirs()) {
        paths.push_back(std::move(d));
    }
    return pack_files(paths);
}

store::TrustedKeys trusted_keys(const Config& config) {
    return store::TrustedKeys::load(config.trusted_key_dirs, config.trusted_keys);
}

store::SignaturePolicy signature_policy(const Config& config) {
    return config.require_signed_packs ? store::SignaturePolicy::require_trusted
                                       : store::SignaturePolicy::report;
}

std::string describe(const RefusedPack& refused) {
    return "pack " + refused.pack.string() + " skipped by the trust policy: " + refused.reason;
}

}  // namespace kcache::service
