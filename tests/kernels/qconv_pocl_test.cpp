// Known-answer tests for qconv_pointwise (and its alias qconv2d_pointwise) on
// PoCL: int8 and f32 outputs, ReLU, bias, saturation; results are bit-exact.

#include <cstring>
#include <random>

#include "cl_harness.hpp"
#include "kcache/cl/launch.hpp"
#include "kcache/kernels/reference.hpp"

namespace kcache::test {
namespace {

using kernels::Activation;
using kernels::QconvShape;
using kernels::QuantOutput;

// Random tensors for one shape; `scale_hi` large drives the int8 output into saturation.
struct QData {
    std::vector<std::int8_t> x, w;
    std::vector<std::int32_t> bias, zero_point;
    std::vector<float> scale;
    std::int32_t x_zero_point = 0;

    QData(const QconvShape& sh, std::uint32_t seed, float scale_hi) {
        std::mt19937 rng(seed);
        std::uniform_int_distribution<int> i8(-128, 127), b(-2000, 2000), zp(-20, 20);
        std::uniform_real_distribution<float> sc(scale_hi / 50, scale_hi);
        for (std::size_t i = 0; i < std::size_t(sh.n) * sh.c * sh.hw; ++i)
            x.push_back(i8(rng));
        for (std::size_t i = 0; i < std::size_t(sh.k) * sh.c; ++i)
            w.push_back(i8(rng));
        for (std::int32_t k = 0; k < sh.k; ++k) {
            bias.push_back(b(rng));
            zero_point.push_back(zp(rng));
            scale.push_back(sc(rng));
        }
        x_zero_point = zp(rng);
    }
    kernels::QconvInputs inputs(bool with_bias) const {
        return {x,
                w,
                with_bias ? std::span<const std::int32_t>(bias) : std::span<const std::int32_t>(),
                scale,
                zero_point,
                x_zero_point};
    }
};

template <class T>
std::vector<std::uint8_t> bytes_of(const std::vector<T>& v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(v.data());
    return {p, p + v.size() * sizeof(T)};
}

std::vector<float> run_qconv(const std::string& name, QuantOutput out, Activation act,
                             const QconvShape& sh, const QData& d, bool with_bias) {
    const std::string id = name + ":out=" + (out == QuantOutput::i8 ? "i8" : "f32") +
                           ",act=" + (act == Activation::relu ? "relu" : "none");
    const std::size_t count = kernels::qconv_work_items(sh);
    const std::size_t out_size = out == QuantOutput::i8 ? 1 : 4;
    auto run = KernelsCl::device_run(id);
    cl::QconvBuffers b;
    b.x = run->upload(bytes_of(d.x));
    b.w = run->upload(bytes_of(d.w));
    b.bias = with_bias ? run->upload(bytes_of(d.bias)) : nullptr;
    b.scale = run->upload(bytes_of(d.scale));
    b.zero_point = run->upload(bytes_of(d.zero_point));
    b.y = run->scratch(count * out_size);
    b.x_zero_point = d.x_zero_point;
    run->launch([&](const cl::LaunchTarget& t) { return cl::launch_qconv_pointwise(t, sh, b); });
    const auto raw = run->read(b.y, count * out_size);
    EXPECT_TRUE(run->ok()) << run->error();
    if (raw.size() != count * out_size) {
        return {};
    }
    std::vector<float> y(count);
    for (std::size_t i = 0; i < count; ++i) {
        if (out == QuantOutput::i8) {
            y[i] = static_cast<std::int8_t>(raw[i]);
        } else {
            std::memcpy(&y[i], &raw[i * 4], 4);
        }
    }
    return y;
}

const QconvShape kShapes[] = {{1, 1, 1, 1},   {2, 3, 5, 7}, {1, 64, 9, 13}, {3, 17, 1, 1},
                              {1, 300, 4, 5}, {0, 8, 4, 9}, {1, 8, 0, 9}};

void check_all(const std::string& name, QuantOutput out, float scale_hi) {
    std::uint32_t seed = 50;
    for (const QconvShape& sh : kShapes) {
        const QData d(sh, ++seed, scale_hi);
        for (Activation act : {Activation::none, Activation::relu}) {
            const bool with_bias = act == Activation::none;
            const auto got = run_qconv(name, out, act, sh, d, with_bias);
            const auto want = kernels::qconv_pointwise_reference(sh, d.inputs(with_bias), out, act);
            EXPECT_EQ(got, want) << name << " n=" << sh.n << " c=" << sh.c << " k=" << sh.k
                                 << " hw=" << sh.hw << (act == Activation::relu ? " relu" : "");
        }
    }
}

TEST_F(KernelsCl, QconvPointwiseInt8Output) {
    check_all("qconv_pointwise", QuantOutput::i8, 0.01f);
}
TEST_F(KernelsCl, QconvPointwiseInt8Saturates) {
    check_all("qconv_pointwise", QuantOutput::i8, 1.0f);
}
TEST_F(KernelsCl, QconvPointwiseF32Output) {
    check_all("qconv_pointwise", QuantOutput::f32, 0.01f);
}

// The old name runs the very same program text and gives the same answers.
TEST_F(KernelsCl, Qconv2dPointwiseAliasRunsTheSameKernel) {
    auto alias = kernels::parse_variant("qconv2d_pointwise:out=i8");
    auto canonical = kernels::parse_variant("qconv_pointwise:out=i8");
    ASSERT_TRUE(alias.ok() && canonical.ok());
    EXPECT_EQ(kernels::render(*alias)->source, kernels::render(*canonical)->source);
    check_all("qconv2d_pointwise", QuantOutput::i8, 0.01f);
}

}  // namespace
}  // namespace kcache::test
