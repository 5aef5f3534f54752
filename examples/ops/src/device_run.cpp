#include "device_run.hpp"

namespace ops::detail {

DeviceRun::DeviceRun(cl_context context, cl_command_queue queue, cl_program program)
    : context_(context), queue_(queue), program_(program) {}

DeviceRun::~DeviceRun() {
    (void)clFinish(queue_);
}

bool DeviceRun::check(cl_int err, const std::string& what) {
    if (err != CL_SUCCESS && error_.empty()) {
        error_ = what + ": OpenCL error " + std::to_string(err);
    }
    return err == CL_SUCCESS;
}

cl_mem DeviceRun::upload(std::span<const std::uint8_t> bytes) {
    if (bytes.empty()) {
        return scratch(0);
    }
    if (!ok()) {
        return nullptr;
    }
    cl_int err = CL_SUCCESS;
    // The driver copies `bytes` during the call: the host vector may go away after.
    BufferHandle buffer(clCreateBuffer(context_, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                       bytes.size(), const_cast<std::uint8_t*>(bytes.data()),
                                       &err));
    if (!check(err, "clCreateBuffer")) {
        return nullptr;
    }
    buffers_.push_back(std::move(buffer));
    return buffers_.back().get();
}

cl_mem DeviceRun::scratch(std::size_t bytes) {
    if (!ok()) {
        return nullptr;
    }
    cl_int err = CL_SUCCESS;
    // A zero-sized buffer is invalid; kernels bound-check, so one byte serves empty tensors.
    BufferHandle buffer(
        clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes == 0 ? 1 : bytes, nullptr, &err));
    if (!check(err, "clCreateBuffer")) {
        return nullptr;
    }
    buffers_.push_back(std::move(buffer));
    return buffers_.back().get();
}

KernelHandle DeviceRun::make_kernel(const char* entry) {
    if (!ok()) {
        return nullptr;
    }
    cl_int err = CL_SUCCESS;
    KernelHandle kernel(clCreateKernel(program_, entry, &err));
    check(err, std::string("clCreateKernel(") + entry + ")");
    return kernel;
}

void DeviceRun::set_arg(cl_kernel kernel, cl_uint index, std::size_t size, const void* value) {
    if (ok()) {
        check(clSetKernelArg(kernel, index, size, value),
              "clSetKernelArg(" + std::to_string(index) + ")");
    }
}

void DeviceRun::enqueue(cl_kernel kernel, const char* entry, const Range& global,
                        const Range& local) {
    if (!ok()) {
        return;
    }
    if (global.empty() || global.size() != local.size() || global.size() > 3) {
        check(CL_INVALID_WORK_DIMENSION, std::string("launch(") + entry + ")");
        return;
    }
    check(clEnqueueNDRangeKernel(queue_, kernel, static_cast<cl_uint>(global.size()), nullptr,
                                 global.data(), local.data(), 0, nullptr, nullptr),
          std::string("clEnqueueNDRangeKernel(") + entry + ")");
}

std::vector<std::uint8_t> DeviceRun::read(cl_mem mem, std::size_t bytes) {
    std::vector<std::uint8_t> out;
    if (!ok() || bytes == 0) {
        return out;
    }
    out.resize(bytes);
    // Blocking (CL_TRUE): the in-order queue finishes every earlier launch, and
    // the call returns only once the bytes are in `out`.
    if (!check(clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, bytes, out.data(), 0, nullptr, nullptr),
               "clEnqueueReadBuffer")) {
        out.clear();
    }
    return out;
}

}  // namespace ops::detail
