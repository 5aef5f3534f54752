#pragma once
// What the known-answer test of each kernel shares: the case under test,
// deterministic inputs, buffer sizing, and the comparison with the CPU
// reference that turns into a KatResult. One file per kernel implements the
// declarations at the end (kat_dot.cpp, kat_conv2d.cpp, …).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kcache/cl/device_run.hpp"
#include "kcache/cl/kat.hpp"
#include "kcache/kernels/numeric.hpp"
#include "kcache/kernels/reference.hpp"

namespace kcache::cl {

// What one check of a KAT read back and compared with, kept when a caller
// asks for it (the canary's differential check runs two programs of one
// variant on the same inputs and compares their outputs).
struct KatOutput {
    std::string what;  // the check's name
    kernels::Tolerance tolerance;
    std::vector<float> got;
    std::vector<kernels::RefValue> want;
};

// The variant a program was built for, as its KAT needs it.
struct KatCase {
    const kernels::Variant& variant;
    kernels::Tolerance tolerance;  // variant_tolerance(variant)
    // Added to the fixed seed of every input; 0 gives the inputs of `verify --run`.
    std::uint32_t seed = 0;
    // Where each check's outputs go, in order; null: nowhere.
    std::vector<KatOutput>* outputs = nullptr;

    // The element type ("dtype" parameter; f32 for a kernel without one).
    kernels::DType dtype() const;
    // The fused activation ("act" parameter).
    kernels::Activation activation() const;
};

// Returns `count` deterministic values in [`lo`, `hi`) rounded to `dtype`.
std::vector<float> kat_values(kernels::DType dtype, std::size_t count, std::uint32_t seed,
                              float lo = -1.0f, float hi = 1.0f);

// Bytes for `count` elements of the widest element type (f32). Element
// buffers get this much whatever the variant's dtype, so that the binary of
// another variant stored under this key reads and writes inside its buffers
// (and fails the comparison) instead of corrupting the process.
inline std::size_t widest_bytes(std::size_t count) {
    return count * sizeof(float);
}

// The checks of one KAT, in order; the result fails with the first check that
// fails and otherwise passes with a summary of every check.
class KatChecks {
  public:
    // Keeps every compared output in `outputs` when it is not null.
    explicit KatChecks(std::vector<KatOutput>* outputs = nullptr) : outputs_(outputs) {}
    // Records a failure when `run` has failed; returns run.ok().
    bool ran(const DeviceRun& run);
    // Records the check `what`: every got[i] within `tol` of want[i]. A failure
    // names how many are outside, the first one (index, got, expected) and the
    // largest error; a pass names the count and the largest error.
    void compare(const std::string& what, const kernels::Tolerance& tol, std::span<const float> got,
                 std::span<const kernels::RefValue> want);
    KatResult result() const;

  private:
    std::vector<KatOutput>* outputs_;
    std::vector<std::string> passed_;
    std::string failure_;
};

// run_kat, keeping each check's outputs in `outputs` (null: nowhere).
KatResult run_kat_keeping(cl_context context, cl_device_id device, cl_program program,
                          const kernels::Variant& variant, std::uint32_t seed,
                          std::vector<KatOutput>* outputs);

// The known-answer test of each registry kernel: runs every entry point of
// the program of `run` on small odd-sized inputs and compares.
KatResult dot_kat(DeviceRun& run, const KatCase& kat);
KatResult conv2d_kat(DeviceRun& run, const KatCase& kat);
KatResult qconv_pointwise_kat(DeviceRun& run, const KatCase& kat);
KatResult batchnorm_kat(DeviceRun& run, const KatCase& kat);

}  // namespace kcache::cl
