#pragma once
// One op's work on the device: buffers it uploads, kernels it launches on the
// context's in-order queue, and blocking reads of the results. The first
// OpenCL failure is kept and every later step does nothing, so an op writes
// its steps straight through and checks ok() once at the end.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cl_handles.hpp"

namespace ops::detail {

// Work sizes of one launch: one entry per dimension (1 or 2).
using Range = std::vector<std::size_t>;

class DeviceRun {
  public:
    DeviceRun(cl_context context, cl_command_queue queue, cl_program program);
    // Waits for everything this run enqueued, so no command outlives its buffers.
    ~DeviceRun();
    DeviceRun(const DeviceRun&) = delete;
    DeviceRun& operator=(const DeviceRun&) = delete;

    // Returns a device copy of `bytes` owned by this run (nullptr after a failure).
    cl_mem upload(std::span<const std::uint8_t> bytes);
    // Returns an uninitialised buffer of `bytes` owned by this run (nullptr after a failure).
    cl_mem scratch(std::size_t bytes);

    // Enqueues kernel `entry` with `args` (cl_mem handles or scalars, in order).
    template <class... Args>
    void launch(const char* entry, const Range& global, const Range& local, const Args&... args) {
        KernelHandle kernel = make_kernel(entry);
        cl_uint index = 0;
        (set_arg(kernel.get(), index++, sizeof(Args), &args), ...);
        enqueue(kernel.get(), entry, global, local);
    }

    // Returns the first `bytes` of `mem`, read with a blocking read: the bytes
    // are complete when it returns (empty after a failure).
    std::vector<std::uint8_t> read(cl_mem mem, std::size_t bytes);

    // Returns true when every step so far succeeded.
    bool ok() const { return error_.empty(); }
    // Returns the first failure ("clEnqueueNDRangeKernel(dot_partial): error -54").
    const std::string& error() const { return error_; }

  private:
    bool check(cl_int err, const std::string& what);
    KernelHandle make_kernel(const char* entry);
    void set_arg(cl_kernel kernel, cl_uint index, std::size_t size, const void* value);
    void enqueue(cl_kernel kernel, const char* entry, const Range& global, const Range& local);

    cl_context context_;
    cl_command_queue queue_;
    cl_program program_;
    std::vector<BufferHandle> buffers_;
    std::string error_;
};

}  // namespace ops::detail
