// dot's known-answer test: dot_partial then dot_finish over a few rows
// (kernels/cl/dot.cl).

#include "kat_check.hpp"

namespace kcache::cli {
namespace {

// Odd, and long enough that each row spans several work-groups of dot_partial.
constexpr std::size_t kN = 1013;
constexpr std::size_t kRows = 3;

}  // namespace

KatOutcome dot_kat(Launcher& run, const KatCase& kat) {
    const kernels::DType dtype = kat.dtype();
    const std::size_t ls = kat.local_size;
    const std::size_t groups = kernels::dot_groups(kN, ls);
    const auto x = kat_values(dtype, kN * kRows, 1);
    const auto y = kat_values(dtype, kN * kRows, 2);
    cl_mem xm = run.upload(kernels::encode(dtype, x), widest_bytes(x.size()));
    cl_mem ym = run.upload(kernels::encode(dtype, y), widest_bytes(y.size()));
    cl_mem partial = run.scratch(sizeof(float) * groups * kRows);
    cl_mem out = run.scratch(widest_bytes(kRows));
    run.launch("dot_partial", {groups * ls, kRows}, {ls, 1},
               {xm, ym, static_cast<std::uint32_t>(kN), partial});
    run.launch("dot_finish", {ls, kRows}, {ls, 1},
               {partial, static_cast<std::uint32_t>(groups), out});
    const auto got = kernels::decode(dtype, run.read(out, kernels::element_size(dtype) * kRows));
    KatChecks checks;
    if (checks.ran(run)) {
        checks.compare("dot " + std::to_string(kRows) + " rows of " + std::to_string(kN),
                       kat.tolerance, got, kernels::dot_reference(x, y, kN, kRows));
    }
    return checks.outcome();
}

}  // namespace kcache::cli
