// The layer's two exported functions, which ocl-icd calls when OPENCL_LAYERS
// names this library: clGetLayerInfo (the layer API version) and clInitLayer
// (the driver's dispatch table in, the layer's out). Nothing here calls
// OpenCL: the loader is still initialising when it calls clInitLayer.

#include <CL/cl_layer.h>

#include <unistd.h>

#include <cstring>
#include <string_view>

#include "layer.hpp"

namespace kcache::layer {
namespace {

_cl_icd_dispatch g_target{};
_cl_icd_dispatch g_table{};

// A kcache helper (kcache-jit, kcache-verify) inherits OPENCL_LAYERS from the
// application; there the layer only passes calls on (the helper compiles for
// the layer, and must never ask it back). Helpers are known by their file
// name: every process kcache starts carries KCACHE_PARENT_PID, applications
// run by `kcache run` from a kcache process included, so that says nothing.
bool in_kcache_helper() {
    char exe[4096];
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        return false;
    }
    const std::string_view path(exe, static_cast<std::size_t>(n));
    const std::string_view name = path.substr(path.rfind('/') + 1);
    return name == "kcache-jit" || name == "kcache-verify";
}

void intercept(_cl_icd_dispatch& t) {
    t.clGetPlatformIDs = get_platform_ids;
    t.clCreateContext = create_context;
    t.clCreateContextFromType = create_context_from_type;
    t.clCreateProgramWithSource = create_program_with_source;
    t.clCreateProgramWithIL = create_program_with_il;
    t.clCreateProgramWithBinary = create_program_with_binary;
    t.clRetainProgram = retain_program;
    t.clReleaseProgram = release_program;
    t.clGetProgramInfo = get_program_info;
    t.clGetProgramBuildInfo = get_program_build_info;
    t.clSetProgramReleaseCallback = set_program_release_callback;
    t.clSetProgramSpecializationConstant = set_program_specialization_constant;
    t.clCreateKernel = create_kernel;
    t.clCreateKernelsInProgram = create_kernels_in_program;
    t.clGetKernelInfo = get_kernel_info;
    t.clReleaseKernel = release_kernel;
    t.clBuildProgram = build_program;
    t.clCompileProgram = compile_program;
    t.clLinkProgram = link_program;
}

}  // namespace

const _cl_icd_dispatch& target() noexcept {
    return g_target;
}

const _cl_icd_dispatch* own_table() noexcept {
    return &g_table;
}

}  // namespace kcache::layer

extern "C" {

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clGetLayerInfo(cl_layer_info param_name, size_t param_value_size, void* param_value,
               size_t* param_value_size_ret) {
    if (param_name != CL_LAYER_API_VERSION) {
        return CL_INVALID_VALUE;
    }
    if (param_value != nullptr) {
        if (param_value_size < sizeof(cl_layer_api_version)) {
            return CL_INVALID_VALUE;
        }
        *static_cast<cl_layer_api_version*>(param_value) = CL_LAYER_API_VERSION_100;
    }
    if (param_value_size_ret != nullptr) {
        *param_value_size_ret = sizeof(cl_layer_api_version);
    }
    return CL_SUCCESS;
}

// Copies the target table (as many entries as the loader passes), then puts
// the layer's entry points over those that take or return a program and
// those that look for platforms or create a context (they start the
// cache's opening). Every
// other entry stays the driver's, so the layer costs those calls nothing.
__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clInitLayer(cl_uint num_entries, const _cl_icd_dispatch* target_dispatch, cl_uint* num_entries_out,
            const _cl_icd_dispatch** layer_dispatch) {
    using namespace kcache::layer;
    constexpr cl_uint kEntries = sizeof(_cl_icd_dispatch) / sizeof(void*);
    if (target_dispatch == nullptr || num_entries_out == nullptr || layer_dispatch == nullptr ||
        num_entries < kEntries) {
        return CL_INVALID_VALUE;
    }
    std::memcpy(&g_target, target_dispatch, sizeof(_cl_icd_dispatch));
    g_table = g_target;
    if (!in_kcache_helper()) {
        intercept(g_table);
    }
    *num_entries_out = kEntries;
    *layer_dispatch = &g_table;
    return CL_SUCCESS;
}

}  // extern "C"
