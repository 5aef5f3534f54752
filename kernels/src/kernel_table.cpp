// The built-in kernels as data: the parameters several kernels share, and the
// table of every kernel's own row (kernel_table.hpp) in its fixed order.

#include "kernel_table.hpp"

#include <algorithm>
#include <iterator>

namespace kcache::kernels::detail {

Param dtype_param() {
    return {
        "dtype",
        {{"f32", "-DKC_F32", {}, ""}, {"f16", "-DKC_F16", {}, ""}, {"bf16", "-DKC_BF16", {}, ""}}};
}

Param activation_param() {
    return {"act", {{"none", "-DKC_RELU=0", {}, ""}, {"relu", "-DKC_RELU=1", {}, ""}}};
}

Param local_size_param(std::vector<int> sizes) {
    Param p{"ls", {}};
    for (int s : sizes) {
        p.values.push_back({std::to_string(s), "-DKC_LOCAL_SIZE=" + std::to_string(s), {}, ""});
    }
    return p;
}

std::vector<KernelInfo> builtin_kernels() {
#define KCACHE_KERNEL(file) file##_kernel(),
    std::vector<KernelInfo> table{
#include "kernel_list.def"
    };
#undef KCACHE_KERNEL
    // The kernels of the first releases keep the order they were listed in
    // (`kcache warm`, `kcache devices` and the canary go through the table in
    // it); any other kernel follows them in the order of its file's name.
    constexpr std::string_view kFirst[] = {"conv2d", "qconv_pointwise", "dot", "batchnorm"};
    const auto rank = [&](const KernelInfo& k) {
        return std::find(std::begin(kFirst), std::end(kFirst), k.name) - std::begin(kFirst);
    };
    std::stable_sort(table.begin(), table.end(),
                     [&](const KernelInfo& a, const KernelInfo& b) { return rank(a) < rank(b); });
    return table;
}

}  // namespace kcache::kernels::detail
