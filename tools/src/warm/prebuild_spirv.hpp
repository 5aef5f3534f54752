#pragma once
// The SPIR-V entries of registry variants (docs/design.md, "The SPIR-V
// tier"), compiled for the OpenCL C extensions each variant requires and
// stored under the key the runtime's IL rung looks up: `kcache prebuild --il`
// puts them in its pack, `kcache warm` in the user store for the devices
// present that load IL.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "kcache/compiler/spirv.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/service/service_api.hpp"
#include "kcache/store/store.hpp"
#include "progress.hpp"

namespace kcache::cli {

// `options` and those that name the SPIR-V tools (--clang, --llvm-spirv).
std::vector<OptionSpec> with_spirv_tool_options(std::vector<OptionSpec> options);

// The SPIR-V backend as `config` and those options say to run it: under the
// configured kcache-jit as its exec guard, scratch directories under tmpdir.
compiler::SpirvConfig spirv_config(const Config& config, const ParsedArgs& args);

// Why the SPIR-V tools cannot be used ("/usr/bin/clang-14: …"), after asking
// each for its version; nullopt when both answer.
std::optional<std::string> spirv_tools_problem(const compiler::SpirvConfig& config);

struct SpirvTally {
    int stored = 0;   // compiled and stored
    int present = 0;  // already held by the store, checksum verified: not compiled
    int failed = 0;   // each named through the progress
};

// Compiles each of `variants` that `store` does not hold yet to SPIR-V (each
// within `timeout`, `jobs` at a time) and stores it there.
SpirvTally build_spirv_entries(const std::vector<kernels::Variant>& variants,
                               const compiler::SpirvConfig& config,
                               std::chrono::milliseconds timeout, std::size_t jobs,
                               store::Store& store, Progress& progress);

}  // namespace kcache::cli
