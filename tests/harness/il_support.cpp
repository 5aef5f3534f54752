#include "il_support.hpp"

#include <cstdio>
#include <cstdlib>

#include "jit_support.hpp"
#include "kcache/compiler/spirv.hpp"
#include "test_platform.hpp"

namespace kcache::test {

std::string test_device_il_version() {
    cl_device_id device = find_test_device();
    char text[256] = {};
    if (device == nullptr || clGetDeviceInfo(device, CL_DEVICE_IL_VERSION, sizeof text - 1, text,
                                             nullptr) != CL_SUCCESS) {
        return {};
    }
    return text;
}

std::string spirv_of(const std::string& source, const std::vector<std::string>& extensions,
                     const std::string& options) {
    compiler::SpirvConfig config;
    config.guard_path = jit_helper_path();
    compiler::SpirvRequest request;
    request.source = source;
    request.options = options;
    request.extensions = extensions;
    auto module = compiler::SpirvCompiler(config).compile(
        request, compiler::Clock::now() + std::chrono::seconds(120));
    if (!module) {
        std::fprintf(stderr, "SPIR-V backend failed: %s\n%s\n", module.error().message.c_str(),
                     module.error().log.c_str());
        std::abort();
    }
    return module->spirv;
}

compiler::JitRequest axpb_il_request(int salt) {
    compiler::JitRequest q = axpb_request(salt);
    q.il = spirv_of(q.source);
    return q;
}

std::string half_fma_source() {
    return "#ifdef cl_khr_fp16\n"
           "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
           "__kernel void hfma(__global half* x) { x[0] = fma(x[0], x[1], x[2]); }\n"
           "#else\n"
           "__kernel void hfma(__global float* x) { x[0] = fma(x[0], x[1], x[2]); }\n"
           "#endif\n";
}

}  // namespace kcache::test
