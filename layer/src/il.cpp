// Programs from IL: clCreateProgramWithIL is the driver's (a module it
// refuses gets the driver's own error) and the layer keeps the SPIR-V module
// with the program, so that clBuildProgram asks the cache with the module as
// the request's input: keyed by its SHA-256, the options and the driver, as
// a program from source is keyed by its text, and on a miss built in
// kcache-jit with clCreateProgramWithIL under the watchdog (build.cpp). A
// driver that loads no IL keeps its answer: the call passes through,
// counted and traced as PASS.

#include <algorithm>
#include <string>
#include <vector>

#include "build.hpp"

namespace kcache::layer {
namespace {

// Whether `device` loads IL: it names an IL version (CL_DEVICE_IL_VERSION,
// empty on a driver without cl_khr_il_program).
bool loads_il(cl_device_id device) {
    size_t n = 0;
    return target().clGetDeviceInfo(device, CL_DEVICE_IL_VERSION, 0, nullptr, &n) == CL_SUCCESS &&
           n > 1;
}

bool all_load_il(const std::vector<cl_device_id>& devices) {
    return std::all_of(devices.begin(), devices.end(), loads_il);
}

// What the trace says of a module the driver refused.
std::string refusal(cl_context context, cl_int err) {
    const std::vector<cl_device_id> devices = context_devices(context);
    const std::string why = !devices.empty() && !all_load_il(devices)
                                ? "a device loads no IL (no cl_khr_il_program)"
                                : "the driver refused the module";
    return "clCreateProgramWithIL: " + why + ", error " + std::to_string(err);
}

}  // namespace

std::vector<cl_device_id> context_devices(cl_context context) {
    size_t size = 0;
    if (target().clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &size) != CL_SUCCESS) {
        return {};
    }
    std::vector<cl_device_id> devices(size / sizeof(cl_device_id));
    if (target().clGetContextInfo(context, CL_CONTEXT_DEVICES, size, devices.data(), nullptr) !=
        CL_SUCCESS) {
        return {};
    }
    return devices;
}

std::string il_pass_reason(const LayerProgram& w, const std::vector<cl_device_id>& devices) {
    return w.specialized                        ? "specialization constants are set"
           : !all_load_il(devices)              ? "a device loads no IL (no cl_khr_il_program)"
           : !is_spirv_module(w.request.source) ? "not a little-endian SPIR-V module"
                                                : "";
}

cl_program CL_API_CALL create_program_with_il(cl_context context, const void* il, size_t length,
                                              cl_int* errcode_ret) {
    cl_int err = CL_SUCCESS;
    const cl_program program = target().clCreateProgramWithIL(context, il, length, &err);
    if (errcode_ret != nullptr) {
        *errcode_ret = err;
    }
    if (inside_cache()) {
        return program;
    }
    if (program == nullptr) {
        note_pass(refusal(context, err));
        return program;
    }
    return wrapped(program, context, std::string(static_cast<const char*>(il), length), true);
}

}  // namespace kcache::layer
