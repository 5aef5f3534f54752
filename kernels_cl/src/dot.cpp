// dot (kernels/cl/dot.cl): its launcher, and its known-answer test:
// dot_partial then dot_finish on a few long rows and on many short ones (a
// real-sized output).

#include "kcache/cl/dot.hpp"

#include <limits>

#include "enqueue.hpp"
#include "kat_check.hpp"

namespace kcache::cl {

std::size_t dot_partial_bytes(std::size_t n, std::size_t rows, std::size_t local_size) noexcept {
    const std::size_t bytes = sizeof(float) * kernels::dot_groups(n, local_size) * rows;
    return bytes == 0 ? 1 : bytes;
}

Launched launch_dot(const LaunchTarget& target, std::size_t n, std::size_t rows,
                    const DotBuffers& buffers) {
    constexpr std::size_t kMax = std::numeric_limits<std::uint32_t>::max();
    if (auto bad = detail::bad_call(target, "launch_dot", n <= kMax && rows <= kMax,
                                    "n or rows exceeds 32 bits")) {
        return fail(*bad);
    }
    if (rows == 0) {  // a zero-sized dimension is not a valid launch
        return detail::marker(target);
    }
    const std::size_t ls = target.local_size;
    const std::size_t groups = kernels::dot_groups(n, ls);
    auto partial = detail::enqueue(
        target, "dot_partial", {groups * ls, rows}, {ls, 1},
        {buffers.x, buffers.y, static_cast<std::uint32_t>(n), buffers.partial}, target.wait);
    if (!partial) {
        return partial;
    }
    const cl_event first = partial->get();
    return detail::enqueue(target, "dot_finish", {ls, rows}, {ls, 1},
                           {buffers.partial, static_cast<std::uint32_t>(groups), buffers.out},
                           {&first, 1});
}

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

KatResult dot_kat(DeviceRun& run, const KatCase& kat) {
    KatChecks checks(kat.outputs);
    check_case(run, checks, kat, kLongRows, kat.seed + 1);
    check_case(run, checks, kat, kManyRows, kat.seed + 3);
    return checks.result();
}

}  // namespace

const KernelKat dot_known_answer{"dot", dot_kat};

}  // namespace kcache::cl
