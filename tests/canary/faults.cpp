#include "faults.hpp"

namespace kcache::test {
namespace {

constexpr const char* kDot = "dot:dtype=f32,arith=f32,ls=256";
constexpr const char* kConv = "conv2d:dtype=f32,act=none,ls=64";
constexpr const char* kConvRelu = "conv2d:dtype=f32,act=relu,ls=64";
constexpr const char* kConvBf16 = "conv2d:dtype=bf16,act=none,ls=64";
constexpr const char* kQconv = "qconv_pointwise:out=f32,act=none,ls=64";
constexpr const char* kQconvRelu = "qconv_pointwise:out=f32,act=relu,ls=64";
constexpr const char* kQconvI8 = "qconv_pointwise:out=i8,act=none,ls=64";
constexpr const char* kQconvI8Relu = "qconv_pointwise:out=i8,act=relu,ls=64";
constexpr const char* kBn = "batchnorm:dtype=f32,act=none,ls=256";

// Build options of another variant under this one's name.
Fault option_swap(const std::string& variant, const std::string& match, const std::string& from,
                  const std::string& to) {
    return {"options " + from + " -> " + to + " (" + variant + ")",
            variant,
            {"KCACHE_FAULT_MATCH=" + match, "KCACHE_FAULT_OPTIONS_FROM=" + from,
             "KCACHE_FAULT_OPTIONS_TO=" + to}};
}

void dot_faults(std::vector<Fault>& f) {
    const char* m = "dot_partial";
    f.push_back(source_fault(kDot, m, "acc += KC_PRODUCT", "acc -= KC_PRODUCT"));
    f.push_back(source_fault(kDot, m, "(LOAD(x, i) * LOAD(y, i))", "(LOAD(x, i) + LOAD(y, i))"));
    f.push_back(source_fault(kDot, m, "float acc = 0.0f;", "float acc = 1.0f;", 1));
    f.push_back(source_fault(kDot, m, "float acc = 0.0f;", "float acc = 0.5f;", 2));
    f.push_back(source_fault(kDot, m, "scratch[lid] += scratch", "scratch[lid] = scratch"));
    f.push_back(source_fault(kDot, m, "half_width /= 2", "half_width /= 4"));
    f.push_back(
        source_fault(kDot, m, "i += groups * KC_LOCAL_SIZE", "i += groups * KC_LOCAL_SIZE + 1"));
    f.push_back(source_fault(kDot, m, "+ group] = scratch[0]", "+ group] = scratch[1]"));
    f.push_back(source_fault(kDot, m, "acc += partial[", "acc += 2.0f * partial["));
    f.push_back(
        source_fault(kDot, m, "STORE(out, row, scratch[0])", "STORE(out, row, -scratch[0])"));
    f.push_back(source_fault(kDot, m, "yr = y + (size_t)row * n", "yr = y"));
    f.push_back(source_fault(kDot, m, "KC_LOCAL_SIZE + lid;", "KC_LOCAL_SIZE + lid + 1;"));
}

void conv2d_faults(std::vector<Fault>& f) {
    const char* m = "conv2d_direct";
    f.push_back(source_fault(kConv, m, "acc += LOAD(x, x_plane", "acc -= LOAD(x, x_plane"));
    f.push_back(source_fault(kConv, m, "- step.s2 + r", "+ step.s2 + r"));
    f.push_back(source_fault(kConv, m, "+ s * dil_out.s1", "+ s"));
    f.push_back(source_fault(kConv, m, "ih >= H", "ih > H"));
    f.push_back(source_fault(kConv, m, "has_bias ? LOAD(bias, k) : 0.0f", "0.0f"));
    f.push_back(source_fault(kConv, m, "c0 = (k / (K / groups)) * cpg", "c0 = 0"));
    f.push_back(
        source_fault(kConv, m, "LOAD(w, (size_t)k * C + c)", "LOAD(w, (size_t)k0 * C + c)"));
    f.push_back(source_fault(kConv, m, "#define KC_PW_BLOCK 4", "#define KC_PW_BLOCK 2"));
    f.push_back(source_fault(kConv, m, "kc_activate(acc[j])", "kc_activate(acc[0])"));
    f.push_back(source_fault(kConv, m, "((size_t)OW * OH)) % K)", "((size_t)OW * OH)) % (K - 1))"));
    f.push_back(source_fault(kConv, m, "iw < 0 || iw >= W", "iw < 0"));
    f.push_back(source_fault(kConvRelu, m, "v > 0.0f ? v : 0.0f", "v > 0.0f ? v : 0.1f"));
    f.push_back(source_fault(kConvBf16, m, "(uint)b << 16", "(uint)b << 15"));
}

void qconv_faults(std::vector<Fault>& f) {
    const char* m = "qconv_pointwise";
    f.push_back(source_fault(kQconv, m, "] - x_zero_point)", "] + x_zero_point)"));
    f.push_back(source_fault(kQconv, m, "int acc = has_bias ? bias[k] : 0;", "int acc = 0;"));
    f.push_back(
        source_fault(kQconv, m, "real = (float)acc * scale[k]", "real = (float)acc * scale[0]"));
    f.push_back(source_fault(kQconv, m, "for (int c = 0; c < C", "for (int c = 1; c < C"));
    f.push_back(source_fault(kQconv, m, "(int)w[(size_t)k * C + c]", "(int)w[(size_t)k * C]"));
    f.push_back(source_fault(kQconv, m, "(idx / pixels) % K)", "(idx / pixels) % (K + 1))"));
    f.push_back(source_fault(kQconvRelu, m, "fmax(real, 0.0f)", "fmin(real, 0.0f)"));
    f.push_back(
        source_fault(kQconvI8, m, "convert_int_sat_rte(real)", "convert_int_sat_rtz(real)"));
    f.push_back(source_fault(kQconvI8, m, "(char)clamp(q, -128L, 127L)", "(char)q"));
    f.push_back(source_fault(kQconvI8Relu, m, "q = max(q, (long)zero_point[k])",
                             "q = min(q, (long)zero_point[k])"));
}

void batchnorm_faults(std::vector<Fault>& f) {
    const char* m = "batchnorm_stats";
    f.push_back(source_fault(kBn, m, "rsqrt(var[c] + eps)", "sqrt(var[c] + eps)"));
    f.push_back(source_fault(kBn, m, "beta[c] - mean[c] * scale", "beta[c] + mean[c] * scale"));
    f.push_back(source_fault(kBn, m, "m += d / n;", "m += d / (n + 1.0f);"));
    f.push_back(source_fault(kBn, m, "m2 += d * (v - m);", "m2 += d * d;"));
    f.push_back(source_fault(kBn, m, "m2_l[0] / count_l[0]", "m2_l[0] / (count_l[0] - 1.0f)"));
    f.push_back(source_fault(kBn, m, "d * (nb / nt);", "d * (na / nt);"));
    f.push_back(source_fault(kBn, m, " + d * d * (na * (nb / nt));", ";"));
    f.push_back(source_fault(kBn, m, "count_l[lid] = nt;", "count_l[lid] = na;"));
    f.push_back(source_fault(kBn, m, "n += 1.0f;", "n += 2.0f;"));
    f.push_back(source_fault(kBn, m, "scale = gamma[c] * rsqrt", "scale = rsqrt"));
    f.push_back(source_fault(kBn, m, "* scale + shift));", "* scale - shift));"));
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
    dot_faults(f);
    conv2d_faults(f);
    qconv_faults(f);
    batchnorm_faults(f);
    f.push_back(option_swap(kConv, "conv2d_direct", "-DKC_RELU=0", "-DKC_RELU=1"));
    f.push_back(option_swap(kQconv, "qconv_pointwise", "-DKC_RELU=0", "-DKC_RELU=1"));
    f.push_back(option_swap(kBn, "batchnorm_stats", "-DKC_RELU=0", "-DKC_RELU=1"));
    f.push_back(option_swap(kDot, "dot_partial", "-DKC_F32", "-DKC_BF16"));
    f.push_back(option_swap(kQconv, "qconv_pointwise", "-DKC_QOUT_F32", "-DKC_QOUT_I8"));
    f.push_back(option_swap(kDot, "dot_partial", "-DKC_LOCAL_SIZE=256", "-DKC_LOCAL_SIZE=64"));
    for (const char* v : {kDot, kConv, kQconv, kBn}) {
        f.push_back({std::string("corrupted binary (") + v + ")", v, {"KCACHE_FAULT_BINARY=flip"}});
    }
    return f;
}

std::vector<Fault> hang_faults() {
    return {{"hang in dot_partial", kDot, {"KCACHE_FAULT_HANG=dot_partial"}},
            {"hang in conv2d_direct", kConv, {"KCACHE_FAULT_HANG=conv2d_direct"}},
            {"hang in qconv_pointwise", kQconv, {"KCACHE_FAULT_HANG=qconv_pointwise"}},
            {"hang in batchnorm_inference", kBn, {"KCACHE_FAULT_HANG=batchnorm_inference"}}};
}

std::vector<Fault> crash_faults() {
    return {{"crash in dot_finish", kDot, {"KCACHE_FAULT_CRASH=dot_finish"}},
            {"crash in conv2d_pointwise", kConv, {"KCACHE_FAULT_CRASH=conv2d_pointwise"}},
            {"crash in qconv_pointwise", kQconv, {"KCACHE_FAULT_CRASH=qconv_pointwise"}},
            {"crash in batchnorm_stats", kBn, {"KCACHE_FAULT_CRASH=batchnorm_stats"}}};
}

}  // namespace kcache::test
