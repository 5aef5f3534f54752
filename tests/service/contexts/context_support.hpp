#pragma once
// Contexts whose destruction a test can observe, and the process's resident
// memory, for the context-cycling tests.

#include "kcache/opencl.h"

#include <atomic>
#include <chrono>
#include <cstdint>

namespace kcache::test {

// A new context on `device` whose destructor callback increments
// `destroyed`; fails the test (returns null) when one cannot be made.
cl_context watched_context(cl_device_id device, std::atomic<int>& destroyed);

// Whether `destroyed` reaches 1 within `limit`: after a kernel ran on a
// context, PoCL may drop its last internal reference on a worker thread a
// little after the owner's release.
bool destroyed_within(const std::atomic<int>& destroyed,
                      std::chrono::milliseconds limit = std::chrono::seconds(10));

// Resident memory of this process in KiB (/proc/self/statm), 0 when unreadable.
std::uint64_t resident_kib();

}  // namespace kcache::test
