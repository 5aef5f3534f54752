#pragma once
// `kcache run`: an application under the OpenCL layer (docs/design.md,
// "The OpenCL layer"), and where the layer library is.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli.hpp"

namespace kcache::cli {

Command run_command();

// The layer library this kcache uses: $KCACHE_LAYER_PATH, else the one
// installed beside this binary's prefix, else the build tree's, else the
// configured install path (which may not exist).
std::string layer_library_path();

// Whether the OpenCL ICD loader this process would load reads OPENCL_LAYERS
// and calls layers' clInitLayer; `detail` names the loader file or says why
// it is not known.
bool loader_supports_layers(std::string& detail);

// The layer's counters of the store directory `dir` (`layer-counters`, which
// every process under the layer updates): {"hit": N, "jit": N, "fail": N,
// "pass": N}, zeros when the file does not exist or cannot be read.
nlohmann::json layer_counters_json(const std::filesystem::path& dir);

}  // namespace kcache::cli
