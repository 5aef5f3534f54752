// dot's known-answer test: dot_partial then dot_finish (kernels/cl/dot.cl),
// on a few long rows and on many short ones (a real-sized output).

#include "kat_check.hpp"

namespace kcache::cl {
namespace {

struct DotCase {
    std::size_t n, rows;
};

// Odd, and long enough that each row spans several work-groups of dot_partial.
constexpr DotCase kLongRows{1013, 3};
// 131075 rows (256 KiB of f16 results, a work-group per row in each pass),
// each shorter than a work-group: every group's tail is partial.
constexpr DotCase kManyRows{5, 131075};

void check_case(DeviceRun& run, KatChecks& checks, const KatCase& kat, DotCase c,
                std::uint32_t seed) {
    const kernels::DType dtype = kat.dtype();
    const auto x = kat_values(dtype, c.n * c.rows, seed);
    const auto y = kat_values(dtype, c.n * c.rows, seed + 1);
    DotBuffers b;
    b.x = run.upload(kernels::encode(dtype, x), widest_bytes(x.size()));
    b.y = run.upload(kernels::encode(dtype, y), widest_bytes(y.size()));
    b.partial = run.scratch(dot_partial_bytes(c.n, c.rows, run.target().local_size));
    b.out = run.scratch(widest_bytes(c.rows));
    run.launch([&](const LaunchTarget& t) { return launch_dot(t, c.n, c.rows, b); });
    const auto got = kernels::decode(dtype, run.read(b.out, kernels::element_size(dtype) * c.rows));
    if (checks.ran(run)) {
        checks.compare("dot " + std::to_string(c.rows) + " rows of " + std::to_string(c.n),
                       kat.tolerance, got, kernels::dot_reference(x, y, c.n, c.rows));
    }
}

}  // namespace

KatResult dot_kat(DeviceRun& run, const KatCase& kat) {
    KatChecks checks(kat.outputs);
    check_case(run, checks, kat, kLongRows, kat.seed + 1);
    check_case(run, checks, kat, kManyRows, kat.seed + 3);
    return checks.result();
}

}  // namespace kcache::cl
