#include "cl_util.hpp"

#include <span>
#include <vector>

#include "kcache/common/cl_error.hpp"

namespace kcache::service {
bool device_in_context(cl_context context, cl_device_id device, std::string& why) {
    // Most contexts hold one device: one query and no allocation for up to
    // eight; more are asked for again with room for all.
    cl_device_id few[8];
    std::size_t size = 0;
    cl_int err = clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof(few), few, &size);
    std::vector<cl_device_id> many;
    if (err == CL_INVALID_VALUE) {  // more than eight: the size alone, then the list
        err = clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &size);
        many.resize(size / sizeof(cl_device_id));
        err = err != CL_SUCCESS || many.empty()
                  ? (err != CL_SUCCESS ? err : CL_INVALID_VALUE)
                  : clGetContextInfo(context, CL_CONTEXT_DEVICES, size, many.data(), nullptr);
    }
    if (err != CL_SUCCESS || size < sizeof(cl_device_id)) {
        why = std::string("clGetContextInfo(CL_CONTEXT_DEVICES) failed (") + cl_error_name(err) +
              "): invalid context?";
        return false;
    }
    const std::span<const cl_device_id> devices =
        many.empty() ? std::span<const cl_device_id>(few, size / sizeof(cl_device_id))
                     : std::span<const cl_device_id>(many);
    for (auto d : devices) {
        if (d == device) {
            return true;
        }
    }
    why = "the device does not belong to the context";
    return false;
}

}  // namespace kcache::service
