#pragma once
// The files a build from source reads (docs/design.md, "The OpenCL layer",
// includes): every file an `#include` of the source, or of a file it
// includes, could name in any directory the compiler searches, read and
// digested, and the manifest that lets a later build of the same source
// and options check those files by their identities alone.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "include_text.hpp"

namespace kcache::layer {

// Where the compiler looks, from the build options, the working directory
// and the directories the driver searches by default.
struct SearchPaths {
    std::string cwd;                // absolute
    std::vector<std::string> dirs;  // -iquote, -I, -isystem, -idirafter, defaults (as written)
    Macros macros;                  // -D
    // Every directory the compiler searches is known (the driver's default
    // ones named, or known to be none): an include found in none of them is
    // found nowhere, so it is in a branch the preprocessor skips (or the
    // build fails), and it is keyed as absent. Otherwise it passes through.
    bool all_known = false;
};
// The directories the driver searches by default, and whether they are
// all of them.
struct DefaultDirs {
    std::vector<std::string> dirs;
    bool all_known = false;
};

// The search paths of `options`, or "" in `why` for options the layer does
// not follow (a reason otherwise).
SearchPaths search_paths(std::string_view options, const std::string& cwd,
                         const DefaultDirs& defaults, std::string& why);

// What identifies a file's contents without reading it: zeros when the file
// changed too recently to be trusted by its identity (it is read again).
struct FileIdentity {
    std::uint64_t device = 0, inode = 0, size = 0;
    std::int64_t mtime_ns = 0, ctime_ns = 0;
    bool operator==(const FileIdentity&) const = default;
};

// One place an include may be found: present (with its digest) or absent.
struct IncludeFile {
    std::string path;     // as the layer opens it (absolute)
    std::string spelled;  // as the compiler names it: the directory as written, then the name
    bool exists = false;
    std::string digest;  // hex SHA-256 of the contents, when present
    FileIdentity identity;
};

struct IncludeScan {
    std::string reason;  // not empty: the build cannot be keyed (and why)
    std::vector<IncludeFile> files;
    std::string digest;  // of every file found or not ("" when the text includes nothing)
};
// Reads `source`'s includes, then theirs, in every search directory.
IncludeScan scan_includes(std::string_view source, const SearchPaths& paths);

// The digest of the files `source` built with `options` in the working
// directory `cwd` reads ("" when none), through the manifest kept in
// `manifest_dir` ("": none is kept); `why` is set when the build cannot be
// keyed.
std::string included_digest(std::string_view source, std::string_view options,
                            const std::string& cwd, const DefaultDirs& defaults,
                            const std::string& manifest_dir, std::string& why);

// The identity of the file at `path` now; false when it is not a regular
// file (`missing` says whether it is absent).
bool identify(const std::string& path, FileIdentity& out, bool& missing, int& error);

}  // namespace kcache::layer
