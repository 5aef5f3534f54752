#include "kcache/cl/program.hpp"

#include "kcache/common/cl_error.hpp"
#include "kcache/common/hot_path.hpp"

namespace kcache::cl {

std::string failure(const std::string& call, cl_int code) {
    return call + ": " + cl_error_name(code) + " (" + std::to_string(code) + ")";
}

std::string build_log(cl_program program, cl_device_id device) {
    std::size_t size = 0;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
            CL_SUCCESS ||
        size == 0) {
        return {};
    }
    std::string log(size, '\0');
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) !=
        CL_SUCCESS) {
        return {};
    }
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) {
        log.pop_back();
    }
    return log;
}

KCACHE_HOT_PATH Result<ProgramHandle, ProgramError> program_from_binary(
    cl_context context, cl_device_id device, std::span<const std::uint8_t> bytes,
    const std::string& options) {
    if (bytes.empty()) {
        return fail(ProgramError{CL_INVALID_VALUE, false, "empty binary"});
    }
    const unsigned char* data = bytes.data();
    std::size_t size = bytes.size();
    cl_int bin_status = CL_SUCCESS;
    cl_int err = CL_SUCCESS;
    ProgramHandle program(
        clCreateProgramWithBinary(context, 1, &device, &size, &data, &bin_status, &err));
    if (!program || err != CL_SUCCESS || bin_status != CL_SUCCESS) {
        const cl_int code = err != CL_SUCCESS ? err : CL_INVALID_BINARY;
        return fail(ProgramError{code, false,
                                 "clCreateProgramWithBinary rejected the binary (" +
                                     std::string(cl_error_name(err)) + ", binary status " +
                                     cl_error_name(bin_status) + ")"});
    }
    err = clBuildProgram(program.get(), 1, &device, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
        return fail(ProgramError{err, true,
                                 failure("clBuildProgram of the binary", err) + ": " +
                                     build_log(program.get(), device)});
    }
    return program;
}

}  // namespace kcache::cl
