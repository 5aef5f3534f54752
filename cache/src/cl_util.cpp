#include "cl_util.hpp"

#include <vector>

#include "kcache/common/cl_error.hpp"

namespace kcache::service {
namespace {

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

}  // namespace

bool device_in_context(cl_context context, cl_device_id device, std::string& why) {
    cl_uint count = 0;
    cl_int err = clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof(count), &count, nullptr);
    if (err != CL_SUCCESS || count == 0) {
        why = "clGetContextInfo failed (" + cl_error_name(err) + "): invalid context?";
        return false;
    }
    std::vector<cl_device_id> devices(count);
    err = clGetContextInfo(context, CL_CONTEXT_DEVICES, count * sizeof(cl_device_id),
                           devices.data(), nullptr);
    if (err != CL_SUCCESS) {
        why = "clGetContextInfo(CL_CONTEXT_DEVICES) failed (" + cl_error_name(err) + ")";
        return false;
    }
    for (auto d : devices) {
        if (d == device) {
            return true;
        }
    }
    why = "the device does not belong to the context";
    return false;
}

Result<ProgramRef, std::string> program_from_binary(cl_context context, cl_device_id device,
                                                    std::span<const std::uint8_t> bytes,
                                                    const std::string& options) {
    if (bytes.empty()) {
        return fail(std::string("empty binary"));
    }
    const unsigned char* data = bytes.data();
    std::size_t size = bytes.size();
    cl_int bin_status = CL_SUCCESS;
    cl_int err = CL_SUCCESS;
    ProgramRef program(
        clCreateProgramWithBinary(context, 1, &device, &size, &data, &bin_status, &err));
    if (!program || err != CL_SUCCESS || bin_status != CL_SUCCESS) {
        return fail("clCreateProgramWithBinary rejected the binary (" + cl_error_name(err) +
                    ", binary status " + cl_error_name(bin_status) + ")");
    }
    err = clBuildProgram(program.get(), 1, &device, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
        return fail("clBuildProgram of the binary failed (" + cl_error_name(err) +
                    "): " + build_log(program.get(), device));
    }
    return program;
}

}  // namespace kcache::service
