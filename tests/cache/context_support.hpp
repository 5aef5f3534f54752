#pragma once
// Contexts whose destruction a test can observe, and the process's resident
// memory, for the context-cycling tests.

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <atomic>
#include <cstdint>

namespace kcache::test {

// A new context on `device` whose destructor callback increments
// `destroyed`; fails the test (returns null) when one cannot be made.
cl_context watched_context(cl_device_id device, std::atomic<int>& destroyed);

// Resident memory of this process in KiB (/proc/self/statm), 0 when unreadable.
std::uint64_t resident_kib();

}  // namespace kcache::test
