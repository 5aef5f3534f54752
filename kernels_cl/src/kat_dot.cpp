// dot's known-answer test: dot_partial then dot_finish over a few rows
// (kernels/cl/dot.cl).

#include "kat_check.hpp"

namespace kcache::cl {
namespace {

// Odd, and long enough that each row spans several work-groups of dot_partial.
constexpr std::size_t kN = 1013;
constexpr std::size_t kRows = 3;

}  // namespace

KatResult dot_kat(DeviceRun& run, const KatCase& kat) {
    const kernels::DType dtype = kat.dtype();
    const auto x = kat_values(dtype, kN * kRows, kat.seed + 1);
    const auto y = kat_values(dtype, kN * kRows, kat.seed + 2);
    DotBuffers b;
    b.x = run.upload(kernels::encode(dtype, x), widest_bytes(x.size()));
    b.y = run.upload(kernels::encode(dtype, y), widest_bytes(y.size()));
    b.partial = run.scratch(dot_partial_bytes(kN, kRows, run.target().local_size));
    b.out = run.scratch(widest_bytes(kRows));
    run.launch([&](const LaunchTarget& t) { return launch_dot(t, kN, kRows, b); });
    const auto got = kernels::decode(dtype, run.read(b.out, kernels::element_size(dtype) * kRows));
    KatChecks checks(kat.outputs);
    if (checks.ran(run)) {
        checks.compare("dot " + std::to_string(kRows) + " rows of " + std::to_string(kN),
                       kat.tolerance, got, kernels::dot_reference(x, y, kN, kRows));
    }
    return checks.result();
}

}  // namespace kcache::cl
