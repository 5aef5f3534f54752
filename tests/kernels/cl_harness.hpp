#pragma once
// The kernel tests' fixture: the PoCL device, programs built once per test
// suite, and a DeviceRun (kcache/cl/device_run.hpp) per variant for the typed
// launchers. The kernels library itself never links OpenCL; kernels_cl and
// these tests do. Raw buffers, argument setting and launches remain only for
// the tests' own non-registry kernels (convert_pocl_test.cpp).

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kcache/cl/device_run.hpp"
#include "kcache/cl/handles.hpp"
#include "kcache/kernels/numeric.hpp"
#include "kcache/kernels/registry.hpp"

namespace kcache::test {

// The PoCL CPU device with a context and an in-order queue.
struct PoclDevice {
    cl_device_id device = nullptr;
    cl::ContextHandle context;
    cl::QueueHandle queue;
    std::vector<std::string> extensions;
};

// Fixture for every `KernelsCl.*` test: points POCL_CACHE_DIR at a fresh temporary
// directory (so PoCL's own cache cannot hide a build problem), opens the PoCL
// device once per suite, and builds each variant at most once per suite.
class KernelsCl : public ::testing::Test {
  public:
    static void SetUpTestSuite();
    static void TearDownTestSuite();

    // The device; valid in every test.
    static PoclDevice& device();
    // The program of variant `id` (e.g. "dot:dtype=f16"), built on first use.
    static cl_program program(const std::string& id);
    // Builds `source` with `options` (not cached); fails the test on a build error.
    static cl::ProgramHandle build(const std::string& source, const std::string& options);
    // A run of variant `id`'s program (built on first use) with the variant's
    // local size, on the device's queue; its buffers live as long as it does.
    static std::unique_ptr<cl::DeviceRun> device_run(const std::string& id);
    // A device buffer holding a copy of `bytes` (at least one byte is allocated).
    static cl::MemHandle buffer(const std::vector<std::uint8_t>& bytes);
    // An uninitialised device buffer of `size` bytes (at least one).
    static cl::MemHandle buffer(std::size_t size);
    // Blocking read (CL_TRUE) of `size` bytes of `mem`.
    static std::vector<std::uint8_t> read(cl_mem mem, std::size_t size);
    // Enqueues `k` over `global` / `local` (1 or 2 dimensions) and waits for it.
    static void run(cl_kernel k, std::vector<std::size_t> global, std::vector<std::size_t> local);

  protected:
    void SetUp() override;

  private:
    static std::filesystem::path cache_dir_;
    static std::unique_ptr<PoclDevice> device_;
    static std::map<std::string, cl::ProgramHandle> programs_;
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

// Fixture of the known-answer tests that run once per element type
// (GetParam()). A suite derives from it and instantiates itself as
// `INSTANTIATE_TEST_SUITE_P(KernelsCl, Suite, ::testing::ValuesIn(kAllDTypes), dtype_name)`,
// so its tests are named `KernelsCl/Suite.Test/f16`.
class KernelsClByDType : public KernelsCl, public ::testing::WithParamInterface<kernels::DType> {};

// The test-name suffix of an element-type parameter: "f32", "f16" or "bf16".
std::string dtype_name(const ::testing::TestParamInfo<kernels::DType>& info);

// Expects each `got[i]` within tolerance(dtype) of `want[i]`; reports the first few misses.
void expect_close(kernels::DType dtype, const std::vector<float>& got,
                  const std::vector<kernels::RefValue>& want, const std::string& what);

}  // namespace kcache::test
