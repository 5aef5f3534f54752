#include "selection.hpp"

#include <algorithm>
#include <set>

namespace kcache::cli {

Result<std::vector<kernels::Variant>, std::string> select_variants(
    const std::vector<std::string>& names, const std::vector<std::string>& dtypes) {
    std::set<std::string> wanted;
    for (const std::string& name : names) {
        auto canonical = kernels::resolve(name);
        if (!canonical) {
            return fail("unknown kernel '" + name + "'");
        }
        wanted.insert(*canonical);
    }
    std::set<std::string> known_dtypes;
    std::vector<kernels::Variant> chosen;
    for (const kernels::Variant& v : kernels::all_variants()) {
        const std::string dtype(v.get("dtype"));
        if (!dtype.empty()) {
            known_dtypes.insert(dtype);
        }
        const bool kernel_ok = wanted.empty() || wanted.count(v.kernel);
        const bool dtype_ok =
            dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
        if (kernel_ok && dtype_ok) {
            chosen.push_back(v);
        }
    }
    for (const std::string& d : dtypes) {
        if (!known_dtypes.count(d)) {
            return fail("unknown dtype '" + d + "'");
        }
    }
    if (chosen.empty()) {
        return fail(std::string("no kernel variant matches the selection"));
    }
    return chosen;
}

}  // namespace kcache::cli
