#pragma once
// What the IL tests and benchmarks share: SPIR-V made from OpenCL C by the
// SPIR-V backend, and what the test device says about IL. The tests labelled
// il run on the SPIR-V PoCL that scripts/il-driver.sh builds (docs/testing.md).

#include <string>
#include <vector>

#include "kcache/compiler/jit.hpp"

namespace kcache::test {

// CL_DEVICE_IL_VERSION of find_test_device() ("SPIR-V_1.2"); empty when the
// device reports none or there is no test device.
std::string test_device_il_version();

// SPIR-V of `source` compiled with clang-14 and llvm-spirv-14 for exactly the
// OpenCL C `extensions` (sorted); aborts the test binary with the tools'
// output when they fail (a test of IL has no meaning without its module).
std::string spirv_of(const std::string& source, const std::vector<std::string>& extensions = {},
                     const std::string& options = "");

// axpb_request(`salt`) carrying the SPIR-V of its source.
compiler::JitRequest axpb_il_request(int salt);

// A kernel "hfma" that computes fma on half values when cl_khr_fp16 is on
// (and nothing without it): SPIR-V compiled with the extension needs the
// device to have it.
std::string half_fma_source();

}  // namespace kcache::test
