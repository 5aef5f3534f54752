#pragma once
// Turning binary bytes into a built program: the one loader every part of
// kcache uses (the lookup ladder, verify, tests, benchmarks, examples), and
// the wording of OpenCL failures in messages.

#include <cstdint>
#include <span>
#include <string>

#include "kcache/cl/handles.hpp"
#include "kcache/common/result.hpp"

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::cl {

// Returns "`call`: CL_NAME (code)", e.g. "clCreateKernel(dot_partial): CL_INVALID_KERNEL_NAME
// (-46)". Throws only std::bad_alloc.
std::string failure(const std::string& call, cl_int code);

// Returns the build log of `program` for `device` without trailing newlines, or ""
// when there is none or the query fails. Throws only std::bad_alloc.
std::string build_log(cl_program program, cl_device_id device);

// Why binary bytes did not become a built program: the OpenCL error of the
// call that failed (CL_INVALID_VALUE for no bytes at all; CL_INVALID_BINARY
// when the creation reported success but the binary's status did not),
// whether it was the build (else the creation), and a message naming the
// call, the OpenCL error names and the build log.
struct ProgramError {
    cl_int code = CL_SUCCESS;
    bool at_build = false;
    std::string message;
};

// Creates a program for `device` in `context` from `bytes` and builds it with
// `options`; the error says why the driver rejected it. Throws only std::bad_alloc.
Result<ProgramHandle, ProgramError> program_from_binary(cl_context context, cl_device_id device,
                                                        std::span<const std::uint8_t> bytes,
                                                        const std::string& options);

}  // namespace kcache::cl

#pragma GCC visibility pop
