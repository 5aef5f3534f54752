#pragma once
// The few OpenCL calls the service makes itself: checking a device belongs
// to a context, and turning stored bytes into a built program.

#include <string>

#include "kcache/cl/handles.hpp"
#include "kcache/cl/program.hpp"

namespace kcache::service {

// Owns one reference to a cl_program.
using ProgramRef = cl::ProgramHandle;
// The one binary-to-program loader (kernels_cl/).
using cl::program_from_binary;

// Returns true when `device` is one of `context`'s devices; false (with
// `why`) when it is not or a query fails (e.g. an invalid handle).
bool device_in_context(cl_context context, cl_device_id device, std::string& why);

}  // namespace kcache::service
