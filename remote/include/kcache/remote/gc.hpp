#pragma once
// `kcache remote gc`: the objects of one namespace (namespaces.hpp) listed
// on every server with their age, and those older than a bound removed.
// What a backend lists: WebDAV (PROPFIND of each collection, the
// getlastmodified of each object), S3 (ListObjectsV2, LastModified), Redis
// (SCAN, OBJECT IDLETIME: time since the last access, Redis keeping no
// write time). Nothing outside the namespace's directory is ever removed:
// a listed name that is not one of its objects is left alone.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kcache::remote {

// Whether gc removes what is old or only says what it would remove.
enum class GcMode { remove, dry_run };

// What became of one listed object.
enum class GcOutcome {
    kept,          // younger than the bound
    would_remove,  // old, and the run is a dry run
    removed,
    failed,  // old, and its removal failed (GcItem::error says why)
};

// "kept", "would_remove", "removed", "failed".
const char* to_string(GcOutcome outcome);

// One object of the namespace.
struct GcItem {
    std::string url;  // its object URL (print it through without_passwords)
    std::chrono::seconds age{0};
    GcOutcome outcome = GcOutcome::kept;
    std::string error;  // for failed: what the server answered
};

struct GcRequest {
    std::string name;  // the namespace
    std::chrono::seconds older_than{0};
    GcMode mode = GcMode::dry_run;
    // Told of each directory listed and each object dealt with, as it
    // happens (the CLI's progress on stderr); may be empty.
    std::function<void(const std::string& line)> progress;
};

struct GcReport {
    std::vector<GcItem> items;  // every object listed, in the servers' order
    std::uint64_t listed = 0, removed = 0, failed = 0;
    std::uint64_t old = 0;  // older than the bound (removed, failed or would_remove)
};

}  // namespace kcache::remote
