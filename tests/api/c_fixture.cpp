#include "c_fixture.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "test_platform.hpp"

namespace kcache::test {

cl_device_id CApiTest::device_ = nullptr;
cl_context CApiTest::context_ = nullptr;

const char* const kScaleSource =
    "__kernel void scale(__global const float* in, __global float* out, float k) {\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = in[i] * k + 7.0f;\n"
    "}\n";

void CApiTest::SetUpTestSuite() {
    device_ = find_test_device();
    if (device_ != nullptr) {
        context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, nullptr);
    }
}

void CApiTest::TearDownTestSuite() {
    if (context_ != nullptr) {
        clReleaseContext(context_);
        context_ = nullptr;
    }
}

void CApiTest::SetUp() {
    TempDirTest::SetUp();
    ASSERT_NE(context_, nullptr) << "no OpenCL device on platform " << test_platform_name();
    ::setenv("KCACHE_DIR", (dir() / "store").c_str(), 1);
    ::setenv("KCACHE_JIT_PATH", KCACHE_TEST_JIT_PATH, 1);
    ::setenv("POCL_CACHE_DIR", (dir() / "pocl").c_str(), 1);
    ::unsetenv("KCACHE_DISABLE");
    ::setenv("KCACHE_CANARY", "off", 1);  // its own tests cover it; it adds seconds here
    ASSERT_EQ(kcache_open(&cache_), KCACHE_STATUS_OK) << kcache_last_error();
}

void CApiTest::TearDown() {
    kcache_close(cache_);
    cache_ = nullptr;
    TempDirTest::TearDown();
}

}  // namespace kcache::test
