#pragma once
// The `Ops` fixture: every test gets its own kcache store (KCACHE_DIR in the
// test's directory) and a clean KCACHE_* environment; the process's PoCL
// kernel cache lives in a private directory, and kcache-jit is the one built
// in this tree (KCACHE_JIT_PATH).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ops/ops.hpp"
#include "temp_dir.hpp"

namespace ops::test {

namespace kk = kcache::kernels;

class Ops : public kcache::test::TempDirTest {
  protected:
    static void SetUpTestSuite();
    static void TearDownTestSuite();
    void SetUp() override;

    // A context on the first OpenCL device; fails the test when it has none
    // or its cache did not open.
    static Context device_context(const Options& options = {});

  private:
    static std::filesystem::path pocl_cache_;
};

// `count` uniform values in [lo, hi) from `seed`; not rounded to any dtype,
// so the ops' own rounding is exercised.
std::vector<float> random_values(std::size_t count, std::uint32_t seed, float lo = -1.0f,
                                 float hi = 1.0f);

// Returns `values` rounded to `dtype` (what the references must be given).
std::vector<float> rounded(DType dtype, const std::vector<float>& values);

// Expects each `got[i]` within `tol` of `want[i]`; reports the first few misses.
void expect_within(const kk::Tolerance& tol, const std::vector<float>& got,
                   const std::vector<kk::RefValue>& want, const std::string& what);

// The three element types, for loops over every dtype.
inline constexpr DType kAllDTypes[] = {DType::f32, DType::f16, DType::bf16};

}  // namespace ops::test
