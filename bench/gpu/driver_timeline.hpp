#pragma once
// In-situ timing of the driver calls a load makes (gpu_bench hit-parts).
// gpu_bench defines the OpenCL entry points a hit uses (driver_timeline.cpp):
// an executable's own definitions come before libOpenCL's for every call
// made from it, kcache's statically linked code included. Each forwards to
// the driver's and, while a recording is alive on its thread, notes when it
// was entered and left.

#include <cstdint>
#include <vector>

namespace gpu_bench {

// One driver call: its name and when it was entered and left (now_ns()).
struct Stamp {
    const char* call;
    std::int64_t entered, left;
};

// The steady clock in nanoseconds.
std::int64_t now_ns();

// Notes every driver call this thread makes into `timeline` while alive
// (nothing when `timeline` is null).
class TimelineRecording {
  public:
    explicit TimelineRecording(std::vector<Stamp>* timeline);
    ~TimelineRecording();
    TimelineRecording(const TimelineRecording&) = delete;
    TimelineRecording& operator=(const TimelineRecording&) = delete;
};

}  // namespace gpu_bench
