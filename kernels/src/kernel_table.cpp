// The built-in kernels as data: names, aliases, entry points and the variant
// parameters with the build options and extensions each value brings.
// The first value of a parameter is its default.

#include "kernel_table.hpp"

namespace kcache::kernels::detail {
namespace {

Param dtype_param() {
    return {
        "dtype",
        {{"f32", "-DKC_F32", {}, ""}, {"f16", "-DKC_F16", {}, ""}, {"bf16", "-DKC_BF16", {}, ""}}};
}

Param activation_param() {
    return {"act", {{"none", "-DKC_RELU=0", {}, ""}, {"relu", "-DKC_RELU=1", {}, ""}}};
}

// Local sizes offered, most preferred first.
Param local_size_param(std::vector<int> sizes) {
    Param p{"ls", {}};
    for (int s : sizes) {
        p.values.push_back({std::to_string(s), "-DKC_LOCAL_SIZE=" + std::to_string(s), {}, ""});
    }
    return p;
}

}  // namespace

std::vector<KernelInfo> builtin_kernels() {
    std::vector<KernelInfo> table;
    table.push_back({"conv2d",
                     {"convolution2d"},
                     "conv2d.cl",
                     {"conv2d_direct", "conv2d_pointwise"},
                     {dtype_param(), activation_param(), local_size_param({64})}});
    table.push_back({"qconv_pointwise",
                     {"qconv2d_pointwise"},
                     "qconv.cl",
                     {"qconv_pointwise"},
                     {{"out", {{"f32", "-DKC_QOUT_F32", {}, ""}, {"i8", "-DKC_QOUT_I8", {}, ""}}},
                      activation_param(),
                      local_size_param({64})}});
    // arith=f16 forms products in native half: it needs cl_khr_fp16 (PoCL here
    // lacks it, so the variant is reported unsupported there).
    table.push_back({"dot",
                     {},
                     "dot.cl",
                     {"dot_partial", "dot_finish"},
                     {dtype_param(),
                      {"arith",
                       {{"f32", "-DKC_HALF_ARITH=0", {}, ""},
                        {"f16", "-DKC_HALF_ARITH=1", {"cl_khr_fp16"}, "dtype=f16"}}},
                      local_size_param({256, 64})}});
    table.push_back({"batchnorm",
                     {"batch_norm"},
                     "batchnorm.cl",
                     {"batchnorm_inference", "batchnorm_stats"},
                     {dtype_param(), activation_param(), local_size_param({256})}});
    return table;
}

}  // namespace kcache::kernels::detail
