#include "kcache/cl/kat.hpp"

#include "kat_check.hpp"
#include "kcache/cl/program.hpp"

namespace kcache::cl {
namespace {

using KatFn = KatResult (*)(DeviceRun&, const KatCase&);

// The known-answer test of each registry kernel that has one (kat_check.hpp).
#define KCACHE_KAT(file) &file##_known_answer,
constexpr const KernelKat* kKats[] = {
#include "kat_list.def"
};
#undef KCACHE_KAT

KatFn kat_of(std::string_view kernel) noexcept {
    for (const KernelKat* k : kKats) {
        if (k->kernel == kernel) {
            return k->run;
        }
    }
    return nullptr;
}

}  // namespace

const char* to_string(KatState state) noexcept {
    switch (state) {
        case KatState::passed:
            return "passed";
        case KatState::failed:
            return "failed";
        case KatState::no_kat:
            break;
    }
    return "no_kat";
}

bool has_kat(std::string_view kernel) noexcept {
    return kat_of(kernel) != nullptr;
}

KatResult run_kat(cl_context context, cl_device_id device, cl_program program,
                  const kernels::Variant& variant, std::uint32_t seed) {
    return run_kat_keeping(context, device, program, variant, seed, nullptr);
}

KatResult run_kat_keeping(cl_context context, cl_device_id device, cl_program program,
                          const kernels::Variant& variant, std::uint32_t seed,
                          std::vector<KatOutput>* outputs) {
    const KatFn kat = kat_of(variant.kernel);
    auto local_size = variant_local_size(variant);
    auto tolerance = kernels::variant_tolerance(variant);
    if (!kat || !local_size || !tolerance) {
        return {KatState::no_kat, "no known-answer test for " + variant.id()};
    }
    cl_int err = CL_SUCCESS;
    QueueHandle queue(clCreateCommandQueueWithProperties(context, device, nullptr, &err));
    if (err != CL_SUCCESS) {
        return {KatState::failed, failure("clCreateCommandQueueWithProperties", err)};
    }
    DeviceRun run(context, queue.get(), program, *local_size);
    return kat(run, {variant, *tolerance, seed, outputs});
}

}  // namespace kcache::cl
