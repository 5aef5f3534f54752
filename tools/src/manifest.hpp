#pragma once
// The warm manifest: an operator library's own kernels for `kcache warm
// --manifest FILE`. A JSON document (every key checked; unknown keys are errors):
//
//   manifest   := { "kernels": [ kernel, … ]?, "registry": [ registry, … ]? }  -- not both empty
//   kernel     := { "name": string,                  -- descriptive, shown in progress
//                   "sources": [ path, … ],          -- concatenated in order; relative
//                                                    --   paths are relative to the manifest
//                   "options": string?,              -- build options for every variant
//                   "entry_points": [ string, … ]?,  -- default: every kernel of the program
//                   "local_size": integer?,          -- >0: one warm-up launch (CPU drivers)
//                   "kat": path?,                    -- its known-answer test (a KAT file:
//                                                    --   docs/canary-kat.md), run on what
//                                                    --   is stored for every variant
//                   "variants": [ variant, … ]?,     -- default: one variant, no extras
//                   "devices": [ string, … ]? }      -- only on devices of these names
//   variant    := { "name": string,                  -- "name:variant" in progress lines
//                   "options": string?,              -- appended to the kernel's options
//                   "extensions": [ string, … ]? }   -- device extensions it needs;
//                                                    --   unsupported where one is missing
//   registry   := { "kernel": string,                -- a registry kernel or alias
//                   "params": { string: string, … }?,  -- its variant parameters
//                   "devices": [ string, … ]? }      -- only on devices of these names
//
// `kcache capture` writes manifests from traces (sources in sources/<sha256>.cl
// beside the manifest); `kcache warm --manifest` and `kcache export --manifest`
// read them.

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"

namespace kcache::cli {

// One thing to build: a kernel of the manifest with one variant applied, or
// a registry variant (`kernel` set; no source).
struct ManifestItem {
    std::string name;                           // "kernel:variant" (or "kernel")
    std::string kernel;                         // registry kernel; empty for a source
    std::map<std::string, std::string> params;  // its variant parameters
    std::vector<std::string> devices;           // device names; empty: every device
    std::string source;
    std::string options;
    std::vector<std::string> entry_points;
    std::vector<std::string> extensions;
    std::size_t local_size = 0;
    std::filesystem::path kat;  // the caller's KAT file; empty: none
};

enum class ManifestErrc { not_found, invalid };

struct ManifestError {
    ManifestErrc code;
    std::string message;  // "FILE: where: what is wrong"
};

// Reads the manifest at `path` and its source files; not_found when the
// manifest or a source is missing, invalid for anything malformed.
Result<std::vector<ManifestItem>, ManifestError> load_manifest(const std::filesystem::path& path);

}  // namespace kcache::cli
