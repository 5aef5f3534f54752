#pragma once
// kcache prebuild --il: the SPIR-V entry of each variant (docs/design.md,
// "The SPIR-V tier"), compiled for the OpenCL C extensions the variant
// requires and stored under the key the runtime's IL rung looks up.

#include <chrono>
#include <string>
#include <vector>

#include "kcache/compiler/spirv.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/store/store.hpp"
#include "progress.hpp"

namespace kcache::cli {

// Compiles each of `variants` to SPIR-V (each within `timeout`, the tools'
// scratch directories under `tmpdir`) into `scratch`; returns how many
// failed (each named through `progress`).
int build_spirv_entries(const std::vector<kernels::Variant>& variants, const std::string& tmpdir,
                        std::chrono::milliseconds timeout, store::Store& scratch,
                        Progress& progress);

}  // namespace kcache::cli
