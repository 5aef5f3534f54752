#include "cl_util.hpp"

#include <span>
#include <vector>

#include "kcache/common/cl_error.hpp"

namespace kcache::service {
bool device_in_context(cl_context context, cl_device_id device, std::string& why) {
    cl_uint count = 0;
    cl_int err = clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof(count), &count, nullptr);
    if (err != CL_SUCCESS || count == 0) {
        why = std::string("clGetContextInfo failed (") + cl_error_name(err) + "): invalid context?";
        return false;
    }
    // Most contexts hold one device: no allocation for up to eight.
    cl_device_id few[8];
    std::vector<cl_device_id> many(count > 8 ? count : 0);
    const std::span<cl_device_id> devices(count > 8 ? many.data() : few, count);
    err = clGetContextInfo(context, CL_CONTEXT_DEVICES, count * sizeof(cl_device_id),
                           devices.data(), nullptr);
    if (err != CL_SUCCESS) {
        why = cl::failure("clGetContextInfo(CL_CONTEXT_DEVICES)", err);
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

}  // namespace kcache::service
