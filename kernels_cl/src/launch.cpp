// What the launchers share (enqueue.hpp), and the local size of a variant.

#include "kcache/cl/launch.hpp"

#include "enqueue.hpp"
#include "kcache/cl/program.hpp"
#include "kcache/common/cl_error.hpp"

namespace kcache::cl {
namespace detail {
namespace {

LaunchError error(const std::string& call, cl_int code) {
    return {code, failure(call, code)};
}

}  // namespace

Launched enqueue(const LaunchTarget& target, const std::string& entry, const Range& global,
                 const Range& local, std::initializer_list<KernelArg> args,
                 std::span<const cl_event> wait) {
    cl_int err = CL_SUCCESS;
    KernelHandle kernel(clCreateKernel(target.program, entry.c_str(), &err));
    if (err != CL_SUCCESS) {
        return fail(error("clCreateKernel(" + entry + ")", err));
    }
    cl_uint index = 0;
    for (const KernelArg& arg : args) {
        err = clSetKernelArg(kernel.get(), index, arg.size(), arg.value());
        if (err != CL_SUCCESS) {
            return fail(error("clSetKernelArg(" + entry + ", " + std::to_string(index) + ")", err));
        }
        ++index;
    }
    cl_event done = nullptr;
    err = clEnqueueNDRangeKernel(target.queue, kernel.get(), static_cast<cl_uint>(global.size()),
                                 nullptr, global.data(), local.data(),
                                 static_cast<cl_uint>(wait.size()),
                                 wait.empty() ? nullptr : wait.data(), &done);
    if (err != CL_SUCCESS) {
        return fail(error("clEnqueueNDRangeKernel(" + entry + ")", err));
    }
    return EventHandle(done);
}

Launched marker(const LaunchTarget& target) {
    cl_event done = nullptr;
    const cl_int err =
        clEnqueueMarkerWithWaitList(target.queue, static_cast<cl_uint>(target.wait.size()),
                                    target.wait.empty() ? nullptr : target.wait.data(), &done);
    if (err != CL_SUCCESS) {
        return fail(error("clEnqueueMarkerWithWaitList", err));
    }
    return EventHandle(done);
}

std::optional<LaunchError> bad_call(const LaunchTarget& target, const char* fn, bool shape_ok,
                                    const char* why) {
    if (target.local_size == 0) {
        return LaunchError{CL_INVALID_WORK_GROUP_SIZE,
                           std::string(fn) + ": no local size (see variant_local_size): " +
                               cl_error_name(CL_INVALID_WORK_GROUP_SIZE)};
    }
    if (!shape_ok) {
        return LaunchError{CL_INVALID_VALUE,
                           std::string(fn) + ": " + why + ": " + cl_error_name(CL_INVALID_VALUE)};
    }
    return std::nullopt;
}

}  // namespace detail

Result<std::size_t, kernels::KernelError> variant_local_size(const kernels::Variant& variant) {
    auto rendered = kernels::render(variant);
    if (!rendered) {
        return fail(rendered.error());
    }
    return rendered->local_size;
}

}  // namespace kcache::cl
