// qconv_pointwise (kernels/cl/qconv.cl): its launcher, and its known-answer
// test: int8 inputs with a zero point, a bias, per-channel scales and zero
// points; the int8 output partly saturates; a small shape and a large one (an
// output of 256 KiB or more as int8, thousands of work-groups, a partial last
// group). int8 results must be bit-exact, f32 ones within 2 ulps
// (variant_tolerance).

#include "kcache/cl/qconv.hpp"

#include <cmath>
#include <cstring>

#include "enqueue.hpp"
#include "kat_check.hpp"

namespace kcache::cl {

Launched launch_qconv_pointwise(const LaunchTarget& target, const kernels::QconvShape& shape,
                                const QconvBuffers& buffers) {
    const bool shape_ok = shape.n >= 0 && shape.c >= 0 && shape.k >= 0 && shape.hw >= 0;
    if (auto bad =
            detail::bad_call(target, "launch_qconv_pointwise", shape_ok, "negative dimension")) {
        return fail(*bad);
    }
    const std::size_t ls = target.local_size;
    const std::int32_t has_bias = buffers.bias != nullptr ? 1 : 0;
    const cl_mem bias = has_bias ? buffers.bias : buffers.zero_point;  // unread without a bias
    return detail::enqueue(
        target, "qconv_pointwise",
        {kernels::padded_global_size(kernels::qconv_work_items(shape), ls)}, {ls},
        {buffers.x, buffers.w, bias, buffers.scale, buffers.zero_point, buffers.y,
         kernels::qconv_shape_arg(shape), buffers.x_zero_point, has_bias},
        target.wait);
}

namespace {

// N, C, K, HW: odd, K not a multiple of anything the kernel might block by.
constexpr kernels::QconvShape kShape{.n = 2, .c = 13, .k = 7, .hw = 11};
// 262576 outputs (256.4 KiB as int8), not a multiple of any local size offered.
constexpr kernels::QconvShape kLargeQconv{.n = 1, .c = 8, .k = 16, .hw = 16411};

// Returns `count` deterministic integers in [lo, hi).
template <class Int>
std::vector<Int> kat_ints(std::size_t count, std::uint32_t seed, float lo, float hi) {
    std::vector<Int> out;
    for (float v : kat_values(kernels::DType::f32, count, seed, lo, hi)) {
        out.push_back(static_cast<Int>(std::floor(v)));
    }
    return out;
}

template <class T>
std::vector<std::uint8_t> bytes_of(const std::vector<T>& v) {
    std::vector<std::uint8_t> bytes(v.size() * sizeof(T));
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return bytes;
}

// The device's output as values: int8 or f32 elements.
std::vector<float> output_values(std::span<const std::uint8_t> raw, kernels::QuantOutput out) {
    if (out == kernels::QuantOutput::f32) {
        return kernels::decode(kernels::DType::f32, raw);
    }
    std::vector<float> values;
    for (std::uint8_t b : raw) {
        values.push_back(static_cast<std::int8_t>(b));
    }
    return values;
}

void check_shape(DeviceRun& run, KatChecks& checks, const KatCase& kat,
                 const kernels::QconvShape& shape, std::uint32_t seed) {
    const auto out =
        kat.variant.get("out") == "i8" ? kernels::QuantOutput::i8 : kernels::QuantOutput::f32;
    const auto n = static_cast<std::size_t>(shape.n), c = static_cast<std::size_t>(shape.c);
    const auto k = static_cast<std::size_t>(shape.k), hw = static_cast<std::size_t>(shape.hw);
    const auto x = kat_ints<std::int8_t>(n * c * hw, seed, -128, 128);
    const auto w = kat_ints<std::int8_t>(k * c, seed + 1, -128, 128);
    const auto bias = kat_ints<std::int32_t>(k, seed + 2, -2000, 2000);
    const auto zero_point = kat_ints<std::int32_t>(k, seed + 3, -20, 20);
    // Accumulators reach a few 10^4: these scales put many int8 results past ±127.
    const auto scale = kat_values(kernels::DType::f32, k, seed + 4, 1.0f / 400, 1.0f / 100);
    const std::int32_t x_zero_point = 3;
    const std::size_t count = kernels::qconv_work_items(shape);
    const std::size_t out_size = out == kernels::QuantOutput::i8 ? 1 : sizeof(float);

    QconvBuffers b;
    b.x = run.upload(bytes_of(x));
    b.w = run.upload(bytes_of(w));
    b.bias = run.upload(bytes_of(bias));
    b.scale = run.upload(bytes_of(scale));
    b.zero_point = run.upload(bytes_of(zero_point));
    b.y = run.scratch(widest_bytes(count));
    b.x_zero_point = x_zero_point;
    run.launch([&](const LaunchTarget& t) { return launch_qconv_pointwise(t, shape, b); });
    const auto got = output_values(run.read(b.y, count * out_size), out);
    if (checks.ran(run)) {
        const kernels::QconvInputs in{x, w, bias, scale, zero_point, x_zero_point};
        std::vector<kernels::RefValue> want;
        for (float v : kernels::qconv_pointwise_reference(shape, in, out, kat.activation())) {
            want.push_back({v, 0});
        }
        checks.compare("qconv_pointwise n " + std::to_string(n) + " c " + std::to_string(c) +
                           " k " + std::to_string(k) + " hw " + std::to_string(hw),
                       kat.tolerance, got, want);
    }
}

KatResult qconv_pointwise_kat(DeviceRun& run, const KatCase& kat) {
    KatChecks checks(kat.outputs);
    check_shape(run, checks, kat, kShape, kat.seed + 30);
    check_shape(run, checks, kat, kLargeQconv, kat.seed + 35);
    return checks.result();
}

}  // namespace

const KernelKat qconv_known_answer{"qconv_pointwise", qconv_pointwise_kat};

}  // namespace kcache::cl
