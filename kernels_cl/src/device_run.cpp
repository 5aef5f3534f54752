#include "kcache/cl/device_run.hpp"

#include <algorithm>

#include "kcache/cl/program.hpp"

namespace kcache::cl {

DeviceRun::DeviceRun(cl_context context, cl_command_queue queue, cl_program program,
                     std::size_t local_size) noexcept
    : context_(context), queue_(queue), program_(program), local_size_(local_size) {}

DeviceRun::~DeviceRun() {
    if (queue_ != nullptr) {
        (void)clFinish(queue_);
    }
}

bool DeviceRun::check(cl_int err, const std::string& call) {
    if (err != CL_SUCCESS && error_.empty()) {
        error_ = failure(call, err);
    }
    return err == CL_SUCCESS;
}

cl_mem DeviceRun::upload(std::span<const std::uint8_t> bytes, std::size_t capacity) {
    cl_mem mem = scratch(std::max(bytes.size(), capacity));
    if (mem != nullptr && !bytes.empty()) {
        // Blocking write: `bytes` may go away as soon as this returns.
        check(clEnqueueWriteBuffer(queue_, mem, CL_TRUE, 0, bytes.size(), bytes.data(), 0, nullptr,
                                   nullptr),
              "clEnqueueWriteBuffer");
    }
    return ok() ? mem : nullptr;
}

cl_mem DeviceRun::scratch(std::size_t bytes) {
    if (!ok()) {
        return nullptr;
    }
    cl_int err = CL_SUCCESS;
    // A zero-sized buffer is invalid; the kernels bound-check, so one byte serves.
    MemHandle mem(clCreateBuffer(context_, CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 1),
                                 nullptr, &err));
    if (!check(err, "clCreateBuffer")) {
        return nullptr;
    }
    buffers_.push_back(std::move(mem));
    return buffers_.back().get();
}

LaunchTarget DeviceRun::target() const noexcept {
    return {queue_, program_, local_size_, {}};
}

bool DeviceRun::record(const Launched& launched) {
    if (!launched && error_.empty()) {
        error_ = launched.error().message;
    }
    return ok();
}

std::vector<std::uint8_t> DeviceRun::read(cl_mem mem, std::size_t bytes) {
    std::vector<std::uint8_t> out;
    if (!ok() || bytes == 0) {
        return out;
    }
    out.resize(bytes);
    // Blocking (CL_TRUE) after a clFinish: every earlier command on the queue,
    // in order or not, has finished, and the bytes are in `out` on return.
    if (!check(clFinish(queue_), "clFinish") ||
        !check(clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, bytes, out.data(), 0, nullptr, nullptr),
               "clEnqueueReadBuffer")) {
        out.clear();
    }
    return out;
}

}  // namespace kcache::cl
