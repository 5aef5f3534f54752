// conv2d (kernels/cl/conv2d.cl): its launcher, and its known-answer test:
// both entry points, each on a shape that conv2d_entry_point routes to it
// (the detail names the entry point that ran), with a bias and the variant's
// activation, and the direct one again at a real size.

#include "kcache/cl/conv2d.hpp"

#include "enqueue.hpp"
#include "kat_check.hpp"

namespace kcache::cl {

Launched launch_conv2d(const LaunchTarget& target, const kernels::Conv2dShape& shape,
                       const Conv2dBuffers& buffers) {
    if (auto bad = detail::bad_call(target, "launch_conv2d", shape.valid(), "shape out of range")) {
        return fail(*bad);
    }
    const auto args = kernels::conv2d_shape_args(shape);
    const std::size_t ls = target.local_size;
    const std::int32_t has_bias = buffers.bias != nullptr ? 1 : 0;
    // Without a bias the kernel never reads its bias argument; x stands in for it.
    const cl_mem bias = has_bias ? buffers.bias : buffers.x;
    return detail::enqueue(
        target, std::string(kernels::conv2d_entry_point(shape)),
        {kernels::padded_global_size(kernels::conv2d_work_items(shape), ls)}, {ls},
        {buffers.x, buffers.w, bias, buffers.y, args[0], args[1], args[2], args[3], has_bias},
        target.wait);
}

namespace {

using kernels::Conv2dShape;

// conv2d_direct: odd sizes, a non-square filter, stride, padding, dilation and
// two groups; output 2×6×4×9.
constexpr Conv2dShape kDirect{.n = 2,
                              .c = 4,
                              .h = 7,
                              .w = 9,
                              .k = 6,
                              .r = 3,
                              .s = 2,
                              .stride_h = 2,
                              .stride_w = 1,
                              .pad_h = 1,
                              .pad_w = 1,
                              .dil_h = 1,
                              .dil_w = 2,
                              .groups = 2};
// conv2d_pointwise: 1×1, with K not a multiple of the kernel's channel block.
constexpr Conv2dShape kPointwise{.n = 2, .c = 5, .h = 3, .w = 7, .k = 7};
// conv2d_direct at a real size: 136240 outputs (266 KiB as f16), over two
// thousand work-groups, the last one partial.
constexpr Conv2dShape kLargeConv2d{
    .n = 1, .c = 3, .h = 130, .w = 131, .k = 8, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};

std::string describe(const Conv2dShape& s) {
    auto dims = [](std::initializer_list<std::int32_t> v) {
        std::string text;
        for (std::int32_t d : v) {
            text += (text.empty() ? "" : "x") + std::to_string(d);
        }
        return text;
    };
    return "x " + dims({s.n, s.c, s.h, s.w}) + " w " + dims({s.k, s.c / s.groups, s.r, s.s}) +
           " stride " + dims({s.stride_h, s.stride_w}) + " pad " + dims({s.pad_h, s.pad_w}) +
           " dil " + dims({s.dil_h, s.dil_w}) + " groups " + std::to_string(s.groups);
}

void check_shape(DeviceRun& run, KatChecks& checks, const KatCase& kat, const Conv2dShape& shape,
                 std::uint32_t seed) {
    const kernels::DType dtype = kat.dtype();
    const std::size_t outputs = shape.output_elements();
    const auto x = kat_values(dtype, shape.input_elements(), seed);
    const auto w = kat_values(dtype, shape.weight_elements(), seed + 1);
    const auto bias = kat_values(dtype, static_cast<std::size_t>(shape.k), seed + 2);
    Conv2dBuffers b;
    b.x = run.upload(kernels::encode(dtype, x), widest_bytes(x.size()));
    b.w = run.upload(kernels::encode(dtype, w), widest_bytes(w.size()));
    b.bias = run.upload(kernels::encode(dtype, bias), widest_bytes(bias.size()));
    b.y = run.scratch(widest_bytes(outputs));
    run.launch([&](const LaunchTarget& t) { return launch_conv2d(t, shape, b); });
    const auto got = kernels::decode(dtype, run.read(b.y, outputs * kernels::element_size(dtype)));
    if (checks.ran(run)) {
        checks.compare(std::string(kernels::conv2d_entry_point(shape)) + " " + describe(shape),
                       kat.tolerance, got,
                       kernels::conv2d_reference(shape, x, w, bias, kat.activation()));
    }
}

KatResult conv2d_kat(DeviceRun& run, const KatCase& kat) {
    KatChecks checks(kat.outputs);
    check_shape(run, checks, kat, kDirect, kat.seed + 10);
    check_shape(run, checks, kat, kPointwise, kat.seed + 20);
    check_shape(run, checks, kat, kLargeConv2d, kat.seed + 25);
    return checks.result();
}

}  // namespace

const KernelKat conv2d_known_answer{"conv2d", conv2d_kat};

}  // namespace kcache::cl
