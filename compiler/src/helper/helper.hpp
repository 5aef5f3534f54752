#pragma once
// Internals of the kcache-jit executable (not part of the library).

#include <map>
#include <string>
#include <vector>

#include "kcache/cl/handles.hpp"
#include "kcache/compiler/jit_protocol.hpp"

namespace kcache::compiler::helper {

// A step that failed: which reply status to send and why.
struct Failure {
    ReplyStatus status = ReplyStatus::driver_error;
    std::string message;
};

// Returns the device matching `selector`, or device_not_found with the list
// of devices that were seen (driver_error when none could be enumerated).
Result<cl_device_id, Failure> select_device(const DeviceSelector& selector);

// The OpenCL state a helper keeps between requests: the devices it selected
// and one context per device. A one-shot helper uses it once; a pooled one
// pays the platform start and the context only for its first request.
class Session {
  public:
    Session() = default;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Serves one request end to end (select, build, warm up, take the
    // binary, validate) and returns the reply to write. With a warm-up and
    // warm_after_reply it skips the warm-up and says so (warm_pending): the
    // caller then serves the request again without warm_after_reply.
    JitReply serve(const JitRequest& request);

  private:
    Result<cl_device_id, Failure> device(const DeviceSelector& selector);
    Result<cl_context, Failure> context(cl_device_id device);

    std::map<std::string, cl_device_id> devices_;  // selector fields → device
    std::map<cl_device_id, cl::ContextHandle> contexts_;
};

// Launches each kernel of `program` named in `entry_points` (all if empty)
// once as described by `launch`; error: why a launch could not be made.
Result<Ok, std::string> warm_up(cl_context context, cl_device_id device, cl_program program,
                                const std::vector<std::string>& entry_points,
                                const WarmupLaunch& launch);

// Names of the kernels in a built `program` (CL_PROGRAM_KERNEL_NAMES).
std::vector<std::string> kernel_names(cl_program program);

// "clFoo: CL_BUILD_PROGRAM_FAILURE (-11)" for messages (cl::failure).
std::string cl_failure(const char* call, cl_int err);

// The reply of a step that failed, with the build log when there is one.
JitReply failed(Failure f, std::string log = {});

// The link of the request's units (link.cpp): each compiled with its
// options, then all linked with the request's; a compile or link error is
// build_error with the driver's log.
Result<cl::ProgramHandle, JitReply> link_units(cl_context ctx, cl_device_id dev,
                                               const JitRequest& q);
// The compile of the request's one unit alone (link.cpp,
// JitRequest::compile_only): its compiled object, or build_error with the
// driver's log.
Result<cl::ProgramHandle, JitReply> compile_only(cl_context ctx, cl_device_id dev,
                                                 const JitRequest& q);

}  // namespace kcache::compiler::helper
