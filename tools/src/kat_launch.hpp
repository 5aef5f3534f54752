#pragma once
// Running a stored program on its device for a known-answer test: buffers,
// launches with any argument list, blocking reads. The first OpenCL failure
// is kept and every later step does nothing, so a test writes its steps
// straight through and looks at ok() once before comparing.

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "kcache/compiler/cl_handles.hpp"
#include "kcache/kernels/launch.hpp"

namespace kcache::cli {

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

    // The argument's size and bytes, as clSetKernelArg takes them.
    std::size_t size() const { return size_; }
    const void* value() const { return bytes_.data(); }

  private:
    KernelArg(const void* value, std::size_t size);

    std::array<std::uint8_t, 16> bytes_{};
    std::size_t size_ = 0;
};

// Work sizes of one launch: one entry per dimension (1 to 3).
using Range = std::vector<std::size_t>;

class Launcher {
  public:
    // Runs kernels of `program` on `device` through a new in-order queue.
    Launcher(cl_context context, cl_device_id device, cl_program program);
    // Waits for everything enqueued, so no launch outlives its buffers.
    ~Launcher();
    Launcher(const Launcher&) = delete;
    Launcher& operator=(const Launcher&) = delete;

    // Returns a buffer holding a copy of `bytes`, at least `capacity` bytes
    // long (nullptr after a failure).
    cl_mem upload(std::span<const std::uint8_t> bytes, std::size_t capacity = 0);
    // Returns an uninitialised buffer of `bytes` (at least one) (nullptr after a failure).
    cl_mem scratch(std::size_t bytes);

    // Enqueues kernel `entry` over `global` / `local` with `args` in order.
    void launch(const char* entry, const Range& global, const Range& local,
                std::initializer_list<KernelArg> args);

    // Returns the first `bytes` of `mem` once every earlier launch finished
    // (blocking read; empty after a failure).
    std::vector<std::uint8_t> read(cl_mem mem, std::size_t bytes);

    // Returns true when every step so far succeeded.
    bool ok() const { return error_.empty(); }
    // Returns the first failure, e.g. "clCreateKernel(conv2d_direct): OpenCL error -46".
    const std::string& error() const { return error_; }

  private:
    bool check(cl_int err, const std::string& what);

    cl_context context_;
    cl_program program_;
    compiler::cl::Queue queue_;
    std::vector<compiler::cl::Mem> buffers_;
    std::string error_;
};

}  // namespace kcache::cli
