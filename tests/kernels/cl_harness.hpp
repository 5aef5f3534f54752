#pragma once
// Small OpenCL helpers local to the kernel tests: RAII handles, the PoCL
// device, programs built once per test suite, buffers, and blocking reads.
// The kernels library itself never links OpenCL; only these tests do.

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kcache/kernels/numeric.hpp"
#include "kcache/kernels/registry.hpp"

namespace kcache::test {

template <class T, cl_int (*Release)(T)>
struct ClDeleter {
    void operator()(T handle) const { Release(handle); }
};
template <class T, cl_int (*Release)(T)>
using ClHandle = std::unique_ptr<std::remove_pointer_t<T>, ClDeleter<T, Release>>;

using Context = ClHandle<cl_context, clReleaseContext>;
using Queue = ClHandle<cl_command_queue, clReleaseCommandQueue>;
using Program = ClHandle<cl_program, clReleaseProgram>;
using Kernel = ClHandle<cl_kernel, clReleaseKernel>;
using Buffer = ClHandle<cl_mem, clReleaseMemObject>;

// The PoCL CPU device with a context and an in-order queue.
struct PoclDevice {
    cl_device_id device = nullptr;
    Context context;
    Queue queue;
    std::vector<std::string> extensions;
};

// Fixture for every `Pocl.*` test: points POCL_CACHE_DIR at a fresh temporary
// directory (so PoCL's own cache cannot hide a build problem), opens the PoCL
// device once per suite, and builds each variant at most once per suite.
class Pocl : public ::testing::Test {
  public:
    static void SetUpTestSuite();
    static void TearDownTestSuite();

    // The device; valid in every test.
    static PoclDevice& device();
    // The program of variant `id` (e.g. "dot:dtype=f16"), built on first use.
    static cl_program program(const std::string& id);
    // Builds `source` with `options` (not cached); fails the test on a build error.
    static Program build(const std::string& source, const std::string& options);
    // A kernel `entry` of variant `id`.
    static Kernel kernel(const std::string& id, const char* entry);
    // A device buffer holding a copy of `bytes` (at least one byte is allocated).
    static Buffer buffer(const std::vector<std::uint8_t>& bytes);
    // An uninitialised device buffer of `size` bytes (at least one).
    static Buffer buffer(std::size_t size);
    // Blocking read (CL_TRUE) of `size` bytes of `mem`.
    static std::vector<std::uint8_t> read(cl_mem mem, std::size_t size);
    // Enqueues `k` over `global` / `local` (1 or 2 dimensions) and waits for it.
    static void run(cl_kernel k, std::vector<std::size_t> global, std::vector<std::size_t> local);

  protected:
    void SetUp() override;

  private:
    static std::filesystem::path cache_dir_;
    static std::unique_ptr<PoclDevice> device_;
    static std::map<std::string, Program> programs_;
};

// Sets kernel argument `index` to `value` (a cl_mem, or a scalar).
template <class T>
void set_arg(cl_kernel k, cl_uint index, const T& value) {
    ASSERT_EQ(clSetKernelArg(k, index, sizeof(T), &value), CL_SUCCESS) << "argument " << index;
}

// Sets every argument of `k` in order.
template <class... Args>
void set_args(cl_kernel k, const Args&... args) {
    cl_uint index = 0;
    (set_arg(k, index++, args), ...);
}

// `count` uniform values in [lo, hi) rounded to `dtype`, from a fixed seed.
std::vector<float> random_values(kernels::DType dtype, std::size_t count, std::uint32_t seed,
                                 float lo = -1.0f, float hi = 1.0f);

// The f32, f16 and bf16 element types, for loops over every dtype.
inline constexpr kernels::DType kAllDTypes[] = {kernels::DType::f32, kernels::DType::f16,
                                                kernels::DType::bf16};

// Expects each `got[i]` within tolerance(dtype) of `want[i]`; reports the first few misses.
void expect_close(kernels::DType dtype, const std::vector<float>& got,
                  const std::vector<kernels::RefValue>& want, const std::string& what);

}  // namespace kcache::test
