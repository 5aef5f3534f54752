#pragma once
// Which packs the runtime may use under the signature policy, shared by the
// runtime (Cache::open), `import`, `verify`, `doctor` and `devices`, so that
// all of them find the same packs and give the same reasons.

#include <filesystem>
#include <string>
#include <vector>

#include "kcache/kcache_types.hpp"
#include "kcache/store/trust.hpp"

namespace kcache::service {

// Every pack file named by `paths` (pack files, or directories whose *.kcpack
// files are taken), sorted, each once. Paths that do not exist are dropped.
std::vector<std::filesystem::path> pack_files(const std::vector<std::filesystem::path>& paths);

// The runtime's pack files for `config`: its packs, then the installed pack
// directories (install_paths.hpp).
std::vector<std::filesystem::path> runtime_pack_files(const Config& config);

// The trusted keys of `config`: every *.pub of its trusted_key_dirs, then its
// trusted_keys files.
store::TrustedKeys trusted_keys(const Config& config);

// require_trusted when `config` requires signed packs, else report.
store::SignaturePolicy signature_policy(const Config& config);

// A pack the trust policy kept out of the ladder (its signature, or a
// location others could replace it in), and why.
struct RefusedPack {
    std::filesystem::path pack;
    std::string reason;
};

// The one line the lookup ladder (and doctor) gives for a refused pack.
std::string describe(const RefusedPack& refused);

}  // namespace kcache::service
