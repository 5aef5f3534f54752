#pragma once
// The warm manifest: an operator library's own kernels for `kcache warm
// --manifest FILE`. A JSON document (every key checked; unknown keys are errors):
//
//   manifest   := { "kernels": [ kernel, … ] }
//   kernel     := { "name": string,                  -- descriptive, shown in progress
//                   "sources": [ path, … ],          -- concatenated in order; relative
//                                                    --   paths are relative to the manifest
//                   "options": string?,              -- build options for every variant
//                   "entry_points": [ string, … ]?,  -- default: every kernel of the program
//                   "local_size": integer?,          -- >0: one warm-up launch (CPU drivers)
//                   "variants": [ variant, … ]? }    -- default: one variant, no extras
//   variant    := { "name": string,                  -- "name:variant" in progress lines
//                   "options": string?,              -- appended to the kernel's options
//                   "extensions": [ string, … ]? }   -- device extensions it needs;
//                                                    --   unsupported where one is missing

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"

namespace kcache::cli {

// One thing to build: a kernel of the manifest with one variant applied.
struct ManifestItem {
    std::string name;  // "kernel:variant" (or "kernel")
    std::string source;
    std::string options;
    std::vector<std::string> entry_points;
    std::vector<std::string> extensions;
    std::size_t local_size = 0;
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
