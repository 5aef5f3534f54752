#include "op_support.hpp"

namespace ops::detail {

Error size_mismatch(const std::string& what, std::size_t got, std::size_t want) {
    return Error{ErrorCode::size_mismatch, what + " has " + std::to_string(got) +
                                               " elements; the shape needs " +
                                               std::to_string(want)};
}

std::vector<float> rounded(DType dtype, std::span<const float> values) {
    std::vector<float> out(values.begin(), values.end());
    for (float& v : out) {
        v = kcache::kernels::round_to(dtype, v);
    }
    return out;
}

std::vector<float> to_values(DType dtype, const std::vector<kcache::kernels::RefValue>& refs) {
    std::vector<float> out;
    out.reserve(refs.size());
    for (const auto& r : refs) {
        out.push_back(kcache::kernels::round_to(dtype, static_cast<float>(r.value)));
    }
    return out;
}

std::map<std::string, std::string> variant_params(DType dtype, Activation act) {
    return {{"dtype", std::string(kcache::kernels::to_string(dtype))},
            {"act", act == Activation::relu ? "relu" : "none"}};
}

}  // namespace ops::detail
