#pragma once
// One piece of device work written straight through: buffers it owns,
// launches through the typed launchers, blocking reads of the results. The
// first OpenCL failure is kept and every later step does nothing, so a caller
// writes its steps in order and looks at ok() once before using the results.
// Members that are not noexcept throw only std::bad_alloc.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kcache/cl/handles.hpp"
#include "kcache/cl/launch.hpp"

namespace kcache::cl {

class DeviceRun {
  public:
    // Runs `program` (built with work-group size `local_size`) on `queue` of
    // `context`; none of them is owned.
    DeviceRun(cl_context context, cl_command_queue queue, cl_program program,
              std::size_t local_size) noexcept;
    // Waits for everything enqueued on the queue, so no command outlives the buffers.
    ~DeviceRun();
    DeviceRun(const DeviceRun&) = delete;
    DeviceRun& operator=(const DeviceRun&) = delete;

    // Returns a buffer owned by this run holding a copy of `bytes`, at least
    // `capacity` bytes (and one byte) long; nullptr after a failure.
    cl_mem upload(std::span<const std::uint8_t> bytes, std::size_t capacity = 0);
    // Returns an uninitialised buffer of `bytes` (at least one) owned by this
    // run; nullptr after a failure.
    cl_mem scratch(std::size_t bytes);

    // Calls `launcher(target())` (a typed launcher, e.g. a lambda around
    // launch_dot) when every step so far succeeded, and keeps its failure;
    // returns ok(). Nothing is launched after a failure, so no kernel ever
    // sees the null buffer of a failed upload.
    template <class Launcher>
    bool launch(Launcher&& launcher) {
        if (ok()) {
            record(launcher(target()));
        }
        return ok();
    }
    // Returns where launchers enqueue: this run's queue, program and local size.
    LaunchTarget target() const noexcept;
    // Keeps `launched`'s failure if it is the first; returns ok().
    bool record(const Launched& launched);

    // Returns the first `bytes` of `mem` once every earlier command finished
    // (a blocking read: the bytes are complete when it returns); empty after a failure.
    std::vector<std::uint8_t> read(cl_mem mem, std::size_t bytes);

    // Returns true when every step so far succeeded.
    bool ok() const noexcept { return error_.empty(); }
    // Returns the first failure, e.g. "clCreateKernel(conv2d_direct): CL_INVALID_KERNEL_NAME
    // (-46)".
    const std::string& error() const noexcept { return error_; }

  private:
    bool check(cl_int err, const std::string& call);

    cl_context context_;
    cl_command_queue queue_;
    cl_program program_;
    std::size_t local_size_;
    std::vector<MemHandle> buffers_;
    std::string error_;
};

}  // namespace kcache::cl
