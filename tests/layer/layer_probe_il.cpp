// layer_probe's programs from IL: `il` creates one from a SPIR-V module's
// header alone and prints what the driver says of it and of its build;
// `il-run FILE` creates one from the module in FILE (its `scale` multiplies
// by 3) and prints every answer of the program, before and after its build,
// and of its kernels.

#include <fstream>
#include <iterator>
#include <string>

#include "layer_probe.hpp"

namespace probe {

int from_il() {
    const cl_uint words[] = {0x07230203, 0x00010000, 0, 1, 0};
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithIL(g_context, words, sizeof words, &err);
    put("il.err", err);
    if (p != nullptr) {
        put("il.build", clBuildProgram(p, 0, nullptr, nullptr, nullptr, nullptr));
        clReleaseProgram(p);
    }
    return 0;
}

int il_run(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    const std::string module((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithIL(g_context, module.data(), module.size(), &err);
    put("il.create", err);
    put("il.program_is_null", p == nullptr);
    if (p == nullptr) {
        return 0;
    }
    size_t il_size = 0;
    put("il.il_query", clGetProgramInfo(p, CL_PROGRAM_IL, 0, nullptr, &il_size));
    put("il.il_size_is_the_module's", il_size == module.size());
    build_and_run("il.", p, "-cl-mad-enable");
    return 0;
}

}  // namespace probe
