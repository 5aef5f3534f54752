#pragma once
// Known-answer tests of built programs, one per registry kernel, covering
// every entry point of each variant: deterministic small odd-sized inputs,
// run through the typed launchers, compared with the kernels' CPU reference
// within the variant's documented tolerance (bit-exact for qconv_pointwise).
// `kcache verify --run` runs them on stored binaries in the kcache-verify helper.

#include <cstdint>
#include <string>
#include <string_view>

#include "kcache/cl/handles.hpp"
#include "kcache/kernels/registry.hpp"

namespace kcache::cl {

enum class KatState {
    passed,  // every check matched the reference
    failed,  // a check did not, or an OpenCL step failed
    no_kat,  // the variant's kernel has no known-answer test
};

// Returns "passed", "failed" or "no_kat".
const char* to_string(KatState state) noexcept;

// A test's verdict and, for people, what it checked (a pass: every check with
// its value count and largest error; a failure: the first failing check with
// the first mismatch and the largest error, or the OpenCL step that failed).
struct KatResult {
    KatState state = KatState::no_kat;
    std::string detail;
};

// Returns true when registry kernel `kernel` (canonical name) has a known-answer test.
bool has_kat(std::string_view kernel) noexcept;

// Runs the known-answer test of `variant` on `program`, built from the
// registry's source for that variant for `device` of `context`, on inputs
// drawn from `seed` (0: the fixed inputs of `verify --run`; the canary draws
// a recorded one). Throws only std::bad_alloc.
KatResult run_kat(cl_context context, cl_device_id device, cl_program program,
                  const kernels::Variant& variant, std::uint32_t seed = 0);

}  // namespace kcache::cl
