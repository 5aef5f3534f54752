#pragma once
// The loader seam: every call the service makes into the compute runtime
// (OpenCL here), behind one interface with one implementation in one file
// (service/src/opencl_loader.cpp). The ladder, the in-process rung and the
// facade ask the loader; none of them calls the runtime itself. A second
// runtime (a Level Zero loader, docs/design.md "The loader seam") would be
// a second implementation of this class, chosen by the composition root.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kcache/cl/handles.hpp"
#include "kcache/common/result.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/opencl.h"

namespace kcache::service {

// Why the loader could not answer.
enum class LoaderErrc {
    query_failed,  // a query of the device or the program failed
    rejected,      // the runtime refused the bytes or the options
};

struct LoaderError {
    LoaderErrc code;
    std::string message;  // names the failing call and the OpenCL error
};

class Loader {
  public:
    virtual ~Loader() = default;

    // Device identity: what kcache keys binaries by (vendor, device, driver,
    // compiler); error: `query_failed`, saying why the device could not be
    // identified.
    virtual Result<device_db::DeviceIdentity, LoaderError> identify(cl_device_id device) = 0;
    // Whether `device` is a root device (lives as long as the process).
    virtual bool is_root_device(cl_device_id device) = 0;
    // The platform of `device`, or null when the query fails.
    virtual cl_platform_id platform_of(cl_device_id device) = 0;
    // Whether `device` belongs to `context`; false with `why` when not (or
    // when `context` is not a valid context).
    virtual bool device_in_context(cl_context context, cl_device_id device, std::string& why) = 0;

    // Bytes to a built program for `device` in `context`, with `options`;
    // error: `rejected`, naming the failing call, the OpenCL error names and
    // the build log.
    virtual Result<cl::ProgramHandle, LoaderError> load(cl_context context, cl_device_id device,
                                                        std::span<const std::uint8_t> bytes,
                                                        const std::string& options) = 0;
    // The device binary of a built single-device program; error:
    // `query_failed`, naming the query.
    virtual Result<std::vector<std::uint8_t>, LoaderError> binary_of(cl_program program) = 0;

    // Context liveness: the context's reference count as the runtime reports
    // it (0 when the query fails), and whether the runtime counts a
    // program's reference in it (probed on `context`).
    virtual std::uint32_t context_references(cl_context context) = 0;
    virtual bool counts_programs(cl_context context) = 0;
    // A new reference of the service's own: on `context` (empty handle when
    // the runtime refuses), on `program` (returned as the caller's).
    virtual cl::ContextHandle retain(cl_context context) = 0;
    virtual cl_program retain(cl_program program) = 0;
};

// The OpenCL loader (the ICD loader's entry points).
std::unique_ptr<Loader> opencl_loader();

}  // namespace kcache::service
