#include "kat_check.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "number_text.hpp"

namespace kcache::cl {

kernels::DType KatCase::dtype() const {
    return kernels::parse_dtype(variant.get("dtype")).value_or(kernels::DType::f32);
}

kernels::Activation KatCase::activation() const {
    return variant.get("act") == "relu" ? kernels::Activation::relu : kernels::Activation::none;
}

std::vector<float> kat_values(kernels::DType dtype, std::size_t count, std::uint32_t seed, float lo,
                              float hi) {
    std::vector<float> v(count);
    for (float& x : v) {
        seed = seed * 1664525u + 1013904223u;  // a fixed LCG: the same inputs on every run
        const float unit = static_cast<float>(seed >> 8) / 16777216.0f;  // [0, 1)
        x = kernels::round_to(dtype, lo + (hi - lo) * unit);
    }
    return v;
}

bool KatChecks::ran(const DeviceRun& run) {
    if (!run.ok() && failure_.empty()) {
        failure_ = run.error();
    }
    return run.ok();
}

void KatChecks::compare(const std::string& what, const kernels::Tolerance& tol,
                        std::span<const float> got, std::span<const kernels::RefValue> want) {
    if (!failure_.empty()) {
        return;
    }
    if (outputs_ != nullptr) {
        outputs_->push_back({what, tol, {got.begin(), got.end()}, {want.begin(), want.end()}});
    }
    if (got.size() != want.size()) {
        failure_ = what + ": read " + std::to_string(got.size()) + " values, expected " +
                   std::to_string(want.size());
        return;
    }
    std::size_t outside = 0, first = 0, worst = 0;
    double max_error = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        double error = std::fabs(got[i] - want[i].value);
        error = std::isnan(error) ? std::numeric_limits<double>::infinity() : error;
        if (error > max_error) {
            max_error = error;
            worst = i;
        }
        if (!kernels::within(tol, got[i], want[i]) && outside++ == 0) {
            first = i;
        }
    }
    const std::string largest =
        "max error " + number_text(max_error) +
        (max_error > 0 ? " at [" + std::to_string(worst) + "]" : std::string());
    if (outside == 0) {
        passed_.push_back(what + ": " + std::to_string(got.size()) + " values, " + largest);
        return;
    }
    failure_ = what + ": " + std::to_string(outside) + " of " + std::to_string(got.size()) +
               " values outside tolerance; first at [" + std::to_string(first) + "]: got " +
               number_text(got[first]) + ", expected " + number_text(want[first].value) + "; " +
               largest;
}

KatResult KatChecks::result() const {
    if (!failure_.empty()) {
        return {KatState::failed, failure_};
    }
    std::string summary;
    for (const std::string& p : passed_) {
        summary += (summary.empty() ? "" : "; ") + p;
    }
    return {KatState::passed, summary};
}

}  // namespace kcache::cl
