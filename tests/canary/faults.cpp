#include "faults.hpp"

namespace kcache::test {
namespace {

// A variant the canary runs, and the kernel of its program a fault alters.
struct Target {
    const char* variant;
    const char* match;
};

constexpr Target kDot{"dot:dtype=f32,arith=f32,ls=256", "dot_partial"};
constexpr Target kConv{"conv2d:dtype=f32,act=none,ls=64", "conv2d_direct"};
constexpr Target kConvRelu{"conv2d:dtype=f32,act=relu,ls=64", "conv2d_direct"};
constexpr Target kConvBf16{"conv2d:dtype=bf16,act=none,ls=64", "conv2d_direct"};
constexpr Target kQconv{"qconv_pointwise:out=f32,act=none,ls=64", "qconv_pointwise"};
constexpr Target kQconvRelu{"qconv_pointwise:out=f32,act=relu,ls=64", "qconv_pointwise"};
constexpr Target kQconvI8{"qconv_pointwise:out=i8,act=none,ls=64", "qconv_pointwise"};
constexpr Target kQconvI8Relu{"qconv_pointwise:out=i8,act=relu,ls=64", "qconv_pointwise"};
constexpr Target kBn{"batchnorm:dtype=f32,act=none,ls=256", "batchnorm_stats"};

// One miscompiled source: occurrence `nth` of `from` becomes `to`.
struct SourceEdit {
    Target target;
    const char* from;
    const char* to;
    int nth = 1;
};

// Altered operators, indices and constants, kernel by kernel.
constexpr SourceEdit kSourceEdits[] = {
    {kDot, "acc += KC_PRODUCT", "acc -= KC_PRODUCT"},
    {kDot, "(LOAD(x, i) * LOAD(y, i))", "(LOAD(x, i) + LOAD(y, i))"},
    {kDot, "float acc = 0.0f;", "float acc = 1.0f;", 1},
    {kDot, "float acc = 0.0f;", "float acc = 0.5f;", 2},
    {kDot, "scratch[lid] += scratch", "scratch[lid] = scratch"},
    {kDot, "half_width /= 2", "half_width /= 4"},
    {kDot, "i += groups * KC_LOCAL_SIZE", "i += groups * KC_LOCAL_SIZE + 1"},
    {kDot, "+ group] = scratch[0]", "+ group] = scratch[1]"},
    {kDot, "acc += partial[", "acc += 2.0f * partial["},
    {kDot, "STORE(out, row, scratch[0])", "STORE(out, row, -scratch[0])"},
    {kDot, "yr = y + (size_t)row * n", "yr = y"},
    {kDot, "KC_LOCAL_SIZE + lid;", "KC_LOCAL_SIZE + lid + 1;"},
    {kConv, "acc += LOAD(x, x_plane", "acc -= LOAD(x, x_plane"},
    {kConv, "- step.s2 + r", "+ step.s2 + r"},
    {kConv, "+ s * dil_out.s1", "+ s"},
    {kConv, "ih >= H", "ih > H"},
    {kConv, "has_bias ? LOAD(bias, k) : 0.0f", "0.0f"},
    {kConv, "c0 = (k / (K / groups)) * cpg", "c0 = 0"},
    {kConv, "LOAD(w, (size_t)k * C + c)", "LOAD(w, (size_t)k0 * C + c)"},
    {kConv, "#define KC_PW_BLOCK 4", "#define KC_PW_BLOCK 2"},
    {kConv, "kc_activate(acc[j])", "kc_activate(acc[0])"},
    {kConv, "((size_t)OW * OH)) % K)", "((size_t)OW * OH)) % (K - 1))"},
    {kConv, "iw < 0 || iw >= W", "iw < 0"},
    {kConvRelu, "v > 0.0f ? v : 0.0f", "v > 0.0f ? v : 0.1f"},
    {kConvBf16, "(uint)b << 16", "(uint)b << 15"},
    {kQconv, "] - x_zero_point)", "] + x_zero_point)"},
    {kQconv, "int acc = has_bias ? bias[k] : 0;", "int acc = 0;"},
    {kQconv, "real = (float)acc * scale[k]", "real = (float)acc * scale[0]"},
    {kQconv, "for (int c = 0; c < C", "for (int c = 1; c < C"},
    {kQconv, "(int)w[(size_t)k * C + c]", "(int)w[(size_t)k * C]"},
    {kQconv, "(idx / pixels) % K)", "(idx / pixels) % (K + 1))"},
    {kQconvRelu, "fmax(real, 0.0f)", "fmin(real, 0.0f)"},
    {kQconvI8, "convert_int_sat_rte(real)", "convert_int_sat_rtz(real)"},
    {kQconvI8, "(char)clamp(q, -128L, 127L)", "(char)q"},
    {kQconvI8Relu, "q = max(q, (long)zero_point[k])", "q = min(q, (long)zero_point[k])"},
    {kBn, "rsqrt(var[c] + eps)", "sqrt(var[c] + eps)"},
    {kBn, "beta[c] - mean[c] * scale", "beta[c] + mean[c] * scale"},
    {kBn, "m += d / n;", "m += d / (n + 1.0f);"},
    {kBn, "m2 += d * (v - m);", "m2 += d * d;"},
    {kBn, "m2_l[0] / count_l[0]", "m2_l[0] / (count_l[0] - 1.0f)"},
    {kBn, "d * (nb / nt);", "d * (na / nt);"},
    {kBn, " + d * d * (na * (nb / nt));", ";"},
    {kBn, "count_l[lid] = nt;", "count_l[lid] = na;"},
    {kBn, "n += 1.0f;", "n += 2.0f;"},
    {kBn, "scale = gamma[c] * rsqrt", "scale = rsqrt"},
    {kBn, "* scale + shift));", "* scale - shift));"},
};

// Build options of another variant under this one's name: `from` becomes `to`.
struct OptionSwap {
    Target target;
    const char* from;
    const char* to;
};

constexpr OptionSwap kOptionSwaps[] = {
    {kConv, "-DKC_RELU=0", "-DKC_RELU=1"},     {kQconv, "-DKC_RELU=0", "-DKC_RELU=1"},
    {kBn, "-DKC_RELU=0", "-DKC_RELU=1"},       {kDot, "-DKC_F32", "-DKC_BF16"},
    {kQconv, "-DKC_QOUT_F32", "-DKC_QOUT_I8"}, {kDot, "-DKC_LOCAL_SIZE=256", "-DKC_LOCAL_SIZE=64"},
};

Fault option_swap(const OptionSwap& s) {
    const std::string from = s.from;
    const std::string to = s.to;
    return {"options " + from + " -> " + to + " (" + s.target.variant + ")",
            s.target.variant,
            {std::string("KCACHE_FAULT_MATCH=") + s.target.match,
             "KCACHE_FAULT_OPTIONS_FROM=" + from, "KCACHE_FAULT_OPTIONS_TO=" + to}};
}

}  // namespace

Fault source_fault(const std::string& variant, const std::string& match, const std::string& from,
                   const std::string& to, int nth) {
    return {"source \"" + from + "\" -> \"" + to + "\" (" + variant + ")",
            variant,
            {"KCACHE_FAULT_MATCH=" + match, "KCACHE_FAULT_SOURCE_FROM=" + from,
             "KCACHE_FAULT_SOURCE_TO=" + to, "KCACHE_FAULT_SOURCE_NTH=" + std::to_string(nth)}};
}

std::vector<Fault> wrong_answer_faults() {
    std::vector<Fault> f;
    for (const SourceEdit& e : kSourceEdits) {
        f.push_back(source_fault(e.target.variant, e.target.match, e.from, e.to, e.nth));
    }
    for (const OptionSwap& s : kOptionSwaps) {
        f.push_back(option_swap(s));
    }
    for (const Target& t : {kDot, kConv, kQconv, kBn}) {
        f.push_back({std::string("corrupted binary (") + t.variant + ")",
                     t.variant,
                     {"KCACHE_FAULT_BINARY=flip"}});
    }
    return f;
}

std::vector<Fault> hang_faults() {
    return {
        {"hang in dot_partial", kDot.variant, {"KCACHE_FAULT_HANG=dot_partial"}},
        {"hang in conv2d_direct", kConv.variant, {"KCACHE_FAULT_HANG=conv2d_direct"}},
        {"hang in qconv_pointwise", kQconv.variant, {"KCACHE_FAULT_HANG=qconv_pointwise"}},
        {"hang in batchnorm_inference", kBn.variant, {"KCACHE_FAULT_HANG=batchnorm_inference"}}};
}

std::vector<Fault> crash_faults() {
    return {{"crash in dot_finish", kDot.variant, {"KCACHE_FAULT_CRASH=dot_finish"}},
            {"crash in conv2d_pointwise", kConv.variant, {"KCACHE_FAULT_CRASH=conv2d_pointwise"}},
            {"crash in qconv_pointwise", kQconv.variant, {"KCACHE_FAULT_CRASH=qconv_pointwise"}},
            {"crash in batchnorm_stats", kBn.variant, {"KCACHE_FAULT_CRASH=batchnorm_stats"}}};
}

}  // namespace kcache::test
