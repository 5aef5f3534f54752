#include "kat.hpp"

#include "kat_check.hpp"
#include "kcache/store/key.hpp"

namespace kcache::cli {
namespace {

namespace cl = compiler::cl;

using KatFn = KatOutcome (*)(Launcher&, const KatCase&);

// The known-answer test of each registry kernel, by canonical name.
struct KernelKat {
    std::string_view kernel;
    KatFn run;
};
constexpr KernelKat kKats[] = {{"conv2d", conv2d_kat},
                               {"qconv_pointwise", qconv_pointwise_kat},
                               {"dot", dot_kat},
                               {"batchnorm", batchnorm_kat}};

KatFn kat_of(std::string_view kernel) {
    for (const KernelKat& k : kKats) {
        if (k.kernel == kernel) {
            return k.run;
        }
    }
    return nullptr;
}

const OpenedDevice* device_of(const std::vector<OpenedDevice>& devices, const store::KeyFields& f) {
    for (const OpenedDevice& d : devices) {
        if (d.identity.name == f.device_name && d.identity.platform_name == f.platform_name &&
            d.identity.driver_version == f.driver_version) {
            return &d;
        }
    }
    return nullptr;
}

}  // namespace

const char* to_string(KatState s) {
    switch (s) {
        case KatState::passed:
            return "kat_passed";
        case KatState::failed:
            return "kat_failed";
        case KatState::no_kat:
            return "no_kat";
        case KatState::device_absent:
            break;
    }
    return "device_absent";
}

KatOutcome run_kat(const std::vector<OpenedDevice>& devices, const store::Entry& entry) {
    const store::KeyFields& f = entry.info.fields;
    const KatOutcome no_kat{KatState::no_kat,
                            "no known-answer test in the CLI for " + f.kernel_name};
    auto variant = kernels::parse_variant(f.kernel_name);
    if (!variant) {
        return no_kat;  // not a registry kernel (e.g. an operator library's own)
    }
    const KatFn kat = kat_of(variant->kernel);
    auto rendered = kernels::render(*variant);
    auto tolerance = kernels::variant_tolerance(*variant);
    if (!kat || !rendered || !tolerance) {
        return no_kat;
    }
    if (f.source_digest != kcache::sha256_hex(rendered->source)) {
        // Another kcache version's source (or a library's own kernel of that
        // name): this KAT tests the ABI of the registry's source only.
        return {KatState::no_kat, f.kernel_name + " was built from other source text than " +
                                      "this kcache's registry renders for it"};
    }
    const OpenedDevice* dev = device_of(devices, f);
    if (!dev) {
        return {KatState::device_absent, "device " + f.device_name + " is not present"};
    }
    const unsigned char* bytes = entry.bytes.data();
    const std::size_t size = entry.bytes.size();
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    cl::Program program(clCreateProgramWithBinary(dev->context.get(), 1, &dev->device, &size,
                                                  &bytes, &status, &err));
    if (err != CL_SUCCESS || status != CL_SUCCESS ||
        clBuildProgram(program.get(), 1, &dev->device, f.build_options.c_str(), nullptr, nullptr) !=
            CL_SUCCESS) {
        return {KatState::failed, "the driver rejected the stored binary"};
    }
    Launcher run(dev->context.get(), dev->device, program.get());
    return kat(run, {*variant, rendered->local_size, *tolerance});
}

}  // namespace kcache::cli
