#pragma once
// The few OpenCL calls the service makes itself: checking a device belongs
// to a context, and turning stored bytes into a built program.

#include "kcache/opencl.h"

#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "kcache/common/result.hpp"

namespace kcache::service {

struct ProgramReleaser {
    void operator()(cl_program p) const noexcept { clReleaseProgram(p); }
};
// Owns one reference to a cl_program.
using ProgramRef = std::unique_ptr<std::remove_pointer_t<cl_program>, ProgramReleaser>;

// Returns true when `device` is one of `context`'s devices; false (with
// `why`) when it is not or a query fails (e.g. an invalid handle).
bool device_in_context(cl_context context, cl_device_id device, std::string& why);

// Creates and builds a program for `device` from `bytes`; the error carries
// the driver's status and build log (the driver rejected the binary).
Result<ProgramRef, std::string> program_from_binary(cl_context context, cl_device_id device,
                                                    std::span<const std::uint8_t> bytes,
                                                    const std::string& options);

}  // namespace kcache::service
