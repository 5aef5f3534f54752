// The manifest of a program's includes (include_scan.hpp): one file per
// source, options, working directory and default directories in the
// store's `layer-includes/`, naming every place an include was looked for,
// with the identity of the file found there (or none). A later build whose
// places all still hold the same files (or none) takes the digest recorded
// with them and reads no header; any difference scans again and replaces it.
//
//   kcache-layer-includes 1
//   <digest of the files>
//   <1|0> <device> <inode> <size> <mtime ns> <ctime ns> <path>   (one per place)

#include <sys/stat.h>

#include <cstdio>
#include <sstream>

#include "include_scan.hpp"
#include "kcache/common/hex.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/common/replace_file.hpp"
#include "kcache/common/sha256.hpp"

namespace kcache::layer {
namespace {

constexpr std::string_view kHeader = "kcache-layer-includes 1";
constexpr std::size_t kMaxManifestBytes = std::size_t{16} << 20;

std::string manifest_name(std::string_view source, std::string_view options, const std::string& cwd,
                          const DefaultDirs& defaults) {
    Sha256 h;
    const auto field = [&h](std::string_view s) {
        const std::string size = std::to_string(s.size()) + ":";
        h.update(size);
        h.update(s);
    };
    field(kHeader);
    field(cwd);
    field(defaults.all_known ? "all known" : "some known");
    for (const std::string& d : defaults.dirs) {
        field(d);
    }
    field(options);
    field(source);
    return to_hex(h.finish());
}

// Whether the place of one manifest line holds what it held.
bool unchanged(const std::string& line) {
    std::istringstream in(line);
    int exists = 0;
    FileIdentity was;
    if (!(in >> exists >> was.device >> was.inode >> was.size >> was.mtime_ns >> was.ctime_ns)) {
        return false;
    }
    std::string path;
    std::getline(in >> std::ws, path);
    FileIdentity now;
    bool missing = false;
    int error = 0;
    const bool regular = identify(path, now, missing, error);
    return exists != 0 ? regular && now == was && now != FileIdentity{} : missing;
}

// The recorded digest when every place is as recorded, else "".
std::string recorded_digest(const std::string& path) {
    auto text = read_regular_file(path, kMaxManifestBytes);
    if (!text) {
        return {};
    }
    std::istringstream in(*text);
    std::string header, digest;
    if (!std::getline(in, header) || header != kHeader || !std::getline(in, digest) ||
        digest.size() != 64) {
        return {};
    }
    for (std::string line; std::getline(in, line);) {
        if (!unchanged(line)) {
            return {};
        }
    }
    return digest;
}

void record(const std::string& dir, const std::string& path, const IncludeScan& scan) {
    std::string text = std::string(kHeader) + "\n" + scan.digest + "\n";
    for (const IncludeFile& f : scan.files) {
        if (f.path.find('\n') != std::string::npos) {
            return;  // a name the manifest cannot hold: scanned every time
        }
        const FileIdentity& i = f.identity;
        text += std::to_string(f.exists ? 1 : 0) + " " + std::to_string(i.device) + " " +
                std::to_string(i.inode) + " " + std::to_string(i.size) + " " +
                std::to_string(i.mtime_ns) + " " + std::to_string(i.ctime_ns) + " " + f.path + "\n";
    }
    ::mkdir(dir.c_str(), 0700);
    std::string error;
    (void)replace_file(path, text, 0600, error);  // not kept: scanned again next time
}

}  // namespace

std::string included_digest(std::string_view source, std::string_view options,
                            const std::string& cwd, const DefaultDirs& defaults,
                            const std::string& manifest_dir, std::string& why) {
    const std::string path =
        manifest_dir.empty() ? std::string()
                             : manifest_dir + "/" + manifest_name(source, options, cwd, defaults);
    if (!path.empty()) {
        if (std::string digest = recorded_digest(path); !digest.empty()) {
            return digest;
        }
    }
    const SearchPaths paths = search_paths(options, cwd, defaults, why);
    if (!why.empty()) {
        return {};
    }
    IncludeScan scan = scan_includes(source, paths);
    if (!scan.reason.empty()) {
        why = std::move(scan.reason);
        return {};
    }
    if (!path.empty() && !scan.digest.empty()) {
        record(manifest_dir, path, scan);
    }
    return scan.digest;
}

}  // namespace kcache::layer
