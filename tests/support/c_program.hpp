#pragma once
// A request through the C API for tests that only need it answered (the
// program itself is not looked at): header-only, for the test binaries that
// link libkcache or kcache_static.

#include <gtest/gtest.h>

#include "kcache/kcache.h"

namespace kcache::test {

// Asks `cache` for registry kernel `kernel` (default parameters, blocking)
// on `device` in `context` and releases the program it returns; fails the
// test, naming kcache_last_error(), when none comes back.
inline void get_and_release_program(kcache_cache* cache, cl_context context, cl_device_id device,
                                    const char* kernel) {
    cl_program program = nullptr;
    kcache_kernel_request request = KCACHE_KERNEL_REQUEST_INIT;
    request.kernel = kernel;
    request.mode = KCACHE_MODE_BLOCKING;
    ASSERT_EQ(kcache_get_kernel_program(cache, context, device, &request, &program, nullptr),
              KCACHE_OK)
        << kcache_last_error();
    clReleaseProgram(program);
}

}  // namespace kcache::test
