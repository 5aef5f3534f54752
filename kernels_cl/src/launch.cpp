#include "kcache/cl/launch.hpp"

#include <array>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <vector>

#include "kcache/cl/program.hpp"
#include "kcache/common/cl_error.hpp"

namespace kcache::cl {
namespace {

// One kernel argument, set by value with exactly the width of its OpenCL
// type: a buffer, an int4, an int, a uint or a float. There are no conversions
// between scalars (a size_t does not compile): the caller names the kernel's type.
class KernelArg {
  public:
    KernelArg(cl_mem mem) : KernelArg(&mem, sizeof mem) {}
    KernelArg(const kernels::Int4& v) : KernelArg(v.data(), sizeof v) {}
    KernelArg(std::int32_t v) : KernelArg(&v, sizeof v) {}
    KernelArg(std::uint32_t v) : KernelArg(&v, sizeof v) {}
    KernelArg(float v) : KernelArg(&v, sizeof v) {}

    std::size_t size() const { return size_; }
    const void* value() const { return bytes_.data(); }

  private:
    KernelArg(const void* value, std::size_t size) : size_(size) {
        std::memcpy(bytes_.data(), value, size);
    }

    std::array<std::uint8_t, 16> bytes_{};
    std::size_t size_ = 0;
};

// Work sizes of one launch: one entry per dimension (1 or 2).
using Range = std::vector<std::size_t>;

LaunchError error(const std::string& call, cl_int code) {
    return {code, failure(call, code)};
}

// Enqueues kernel `entry` of the target's program over `global` / `local`
// with `args`, after the events in `wait`.
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

// A command that does nothing but complete after target.wait: the event of a
// launcher with nothing to compute.
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

Launched invalid(const std::string& what) {
    return fail(LaunchError{CL_INVALID_VALUE, what + ": " + cl_error_name(CL_INVALID_VALUE)});
}

}  // namespace

Result<std::size_t, kernels::KernelError> variant_local_size(const kernels::Variant& variant) {
    auto rendered = kernels::render(variant);
    if (!rendered) {
        return fail(rendered.error());
    }
    return rendered->local_size;
}

std::size_t dot_partial_bytes(std::size_t n, std::size_t rows, std::size_t local_size) noexcept {
    const std::size_t bytes = sizeof(float) * kernels::dot_groups(n, local_size) * rows;
    return bytes == 0 ? 1 : bytes;
}

Launched launch_dot(const LaunchTarget& target, std::size_t n, std::size_t rows,
                    const DotBuffers& buffers) {
    constexpr std::size_t kMax = std::numeric_limits<std::uint32_t>::max();
    if (n > kMax || rows > kMax) {
        return invalid("launch_dot: n or rows exceeds 32 bits");
    }
    if (rows == 0) {  // a zero-sized dimension is not a valid launch
        return marker(target);
    }
    const std::size_t ls = target.local_size;
    const std::size_t groups = kernels::dot_groups(n, ls);
    auto partial = enqueue(target, "dot_partial", {groups * ls, rows}, {ls, 1},
                           {buffers.x, buffers.y, static_cast<std::uint32_t>(n), buffers.partial},
                           target.wait);
    if (!partial) {
        return partial;
    }
    const cl_event first = partial->get();
    return enqueue(target, "dot_finish", {ls, rows}, {ls, 1},
                   {buffers.partial, static_cast<std::uint32_t>(groups), buffers.out}, {&first, 1});
}

Launched launch_conv2d(const LaunchTarget& target, const kernels::Conv2dShape& shape,
                       const Conv2dBuffers& buffers) {
    if (!shape.valid()) {
        return invalid("launch_conv2d: shape out of range");
    }
    const auto args = kernels::conv2d_shape_args(shape);
    const std::size_t ls = target.local_size;
    const std::int32_t has_bias = buffers.bias != nullptr ? 1 : 0;
    // Without a bias the kernel never reads its bias argument; x stands in for it.
    const cl_mem bias = has_bias ? buffers.bias : buffers.x;
    return enqueue(
        target, std::string(kernels::conv2d_entry_point(shape)),
        {kernels::padded_global_size(kernels::conv2d_work_items(shape), ls)}, {ls},
        {buffers.x, buffers.w, bias, buffers.y, args[0], args[1], args[2], args[3], has_bias},
        target.wait);
}

Launched launch_qconv_pointwise(const LaunchTarget& target, const kernels::QconvShape& shape,
                                const QconvBuffers& buffers) {
    if (shape.n < 0 || shape.c < 0 || shape.k < 0 || shape.hw < 0) {
        return invalid("launch_qconv_pointwise: negative dimension");
    }
    const std::size_t ls = target.local_size;
    const std::int32_t has_bias = buffers.bias != nullptr ? 1 : 0;
    const cl_mem bias = has_bias ? buffers.bias : buffers.zero_point;  // unread without a bias
    return enqueue(target, "qconv_pointwise",
                   {kernels::padded_global_size(kernels::qconv_work_items(shape), ls)}, {ls},
                   {buffers.x, buffers.w, bias, buffers.scale, buffers.zero_point, buffers.y,
                    kernels::qconv_shape_arg(shape), buffers.x_zero_point, has_bias},
                   target.wait);
}

Launched launch_batchnorm_inference(const LaunchTarget& target,
                                    const kernels::BatchnormShape& shape,
                                    const BatchnormBuffers& buffers) {
    if (shape.n < 0 || shape.c < 0 || shape.hw < 0) {
        return invalid("launch_batchnorm_inference: negative dimension");
    }
    const std::size_t ls = target.local_size;
    return enqueue(target, "batchnorm_inference",
                   {kernels::padded_global_size(kernels::batchnorm_work_items(shape), ls)}, {ls},
                   {buffers.x, buffers.mean, buffers.var, buffers.gamma, buffers.beta, buffers.y,
                    kernels::batchnorm_shape_arg(shape), buffers.eps},
                   target.wait);
}

Launched launch_batchnorm_stats(const LaunchTarget& target, const kernels::BatchnormShape& shape,
                                const BatchnormBuffers& buffers) {
    if (shape.n < 0 || shape.c < 0 || shape.hw < 0) {
        return invalid("launch_batchnorm_stats: negative dimension");
    }
    if (shape.c == 0) {  // one work-group per channel; none is not a valid launch
        return marker(target);
    }
    const std::size_t ls = target.local_size;
    return enqueue(target, "batchnorm_stats", {static_cast<std::size_t>(shape.c) * ls}, {ls},
                   {buffers.x, buffers.mean, buffers.var, kernels::batchnorm_shape_arg(shape)},
                   target.wait);
}

Launched launch_batchnorm_training(const LaunchTarget& target, const kernels::BatchnormShape& shape,
                                   const BatchnormBuffers& buffers) {
    auto stats = launch_batchnorm_stats(target, shape, buffers);
    if (!stats) {
        return stats;
    }
    const cl_event first = stats->get();
    LaunchTarget then = target;
    then.wait = {&first, 1};
    return launch_batchnorm_inference(then, shape, buffers);
}

}  // namespace kcache::cl
