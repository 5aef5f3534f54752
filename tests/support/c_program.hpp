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
    ASSERT_EQ(kcache_get_program(cache, context, device, kernel, nullptr, 0, KCACHE_MODE_BLOCKING,
                                 &program, nullptr),
              KCACHE_OK)
        << kcache_last_error();
    clReleaseProgram(program);
}

}  // namespace kcache::test
