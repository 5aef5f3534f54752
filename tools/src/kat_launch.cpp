#include "kat_launch.hpp"

#include <algorithm>
#include <cstring>

namespace kcache::cli {

KernelArg::KernelArg(const void* value, std::size_t size) : size_(size) {
    std::memcpy(bytes_.data(), value, size);
}

Launcher::Launcher(cl_context context, cl_device_id device, cl_program program)
    : context_(context), program_(program) {
    cl_int err = CL_SUCCESS;
    queue_.reset(clCreateCommandQueueWithProperties(context, device, nullptr, &err));
    check(err, "clCreateCommandQueueWithProperties");
}

Launcher::~Launcher() {
    if (queue_) {
        (void)clFinish(queue_.get());
    }
}

bool Launcher::check(cl_int err, const std::string& what) {
    if (err != CL_SUCCESS && error_.empty()) {
        error_ = what + ": OpenCL error " + std::to_string(err);
    }
    return err == CL_SUCCESS;
}

cl_mem Launcher::upload(std::span<const std::uint8_t> bytes, std::size_t capacity) {
    cl_mem mem = scratch(std::max(bytes.size(), capacity));
    if (mem && !bytes.empty()) {
        // Blocking write: `bytes` may go away as soon as this returns.
        check(clEnqueueWriteBuffer(queue_.get(), mem, CL_TRUE, 0, bytes.size(), bytes.data(), 0,
                                   nullptr, nullptr),
              "clEnqueueWriteBuffer");
    }
    return ok() ? mem : nullptr;
}

cl_mem Launcher::scratch(std::size_t bytes) {
    if (!ok()) {
        return nullptr;
    }
    cl_int err = CL_SUCCESS;
    // A zero-sized buffer is invalid; the kernels bound-check, so one byte serves.
    compiler::cl::Mem mem(clCreateBuffer(context_, CL_MEM_READ_WRITE,
                                         std::max<std::size_t>(bytes, 1), nullptr, &err));
    if (!check(err, "clCreateBuffer")) {
        return nullptr;
    }
    buffers_.push_back(std::move(mem));
    return buffers_.back().get();
}

void Launcher::launch(const char* entry, const Range& global, const Range& local,
                      std::initializer_list<KernelArg> args) {
    if (!ok()) {
        return;
    }
    const std::string name(entry);
    cl_int err = CL_SUCCESS;
    compiler::cl::Kernel kernel(clCreateKernel(program_, entry, &err));
    if (!check(err, "clCreateKernel(" + name + ")")) {
        return;
    }
    cl_uint index = 0;
    for (const KernelArg& arg : args) {
        if (!check(clSetKernelArg(kernel.get(), index, arg.size(), arg.value()),
                   "clSetKernelArg(" + name + ", " + std::to_string(index) + ")")) {
            return;
        }
        ++index;
    }
    if (global.empty() || global.size() != local.size() || global.size() > 3) {
        check(CL_INVALID_WORK_DIMENSION, "launch(" + name + ")");
        return;
    }
    check(clEnqueueNDRangeKernel(queue_.get(), kernel.get(), static_cast<cl_uint>(global.size()),
                                 nullptr, global.data(), local.data(), 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel(" + name + ")");
}

std::vector<std::uint8_t> Launcher::read(cl_mem mem, std::size_t bytes) {
    std::vector<std::uint8_t> out;
    if (!ok() || bytes == 0) {
        return out;
    }
    out.resize(bytes);
    // Blocking (CL_TRUE) on an in-order queue: every earlier launch has finished
    // and the bytes are in `out` when the call returns.
    if (!check(clEnqueueReadBuffer(queue_.get(), mem, CL_TRUE, 0, bytes, out.data(), 0, nullptr,
                                   nullptr),
               "clEnqueueReadBuffer")) {
        out.clear();
    }
    return out;
}

}  // namespace kcache::cli
