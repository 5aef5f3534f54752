#pragma once
// What the launchers of every kernel (src/<file>.cpp) share: a kernel
// argument of its exact OpenCL width, one enqueue of an entry point, the
// marker of a launch with nothing to do, and the check of a launcher's call
// (and, through kcache/kernels/launch.hpp, padded_global_size).

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kcache/cl/launch_target.hpp"
#include "kcache/kernels/launch.hpp"
#include "kcache/kernels/types.hpp"

namespace kcache::cl::detail {

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

// Enqueues kernel `entry` of the target's program over `global` / `local`
// with `args`, after the events in `wait`.
Launched enqueue(const LaunchTarget& target, const std::string& entry, const Range& global,
                 const Range& local, std::initializer_list<KernelArg> args,
                 std::span<const cl_event> wait);

// A command that does nothing but complete after target.wait: the event of a
// launcher with nothing to compute.
Launched marker(const LaunchTarget& target);

// The error of launcher `fn` called without a local size, or with a shape
// that fails its check (`why` says how); nullopt when the call is fine.
std::optional<LaunchError> bad_call(const LaunchTarget& target, const char* fn, bool shape_ok,
                                    const char* why);

}  // namespace kcache::cl::detail
