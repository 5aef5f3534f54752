#pragma once
// What the tests of the C API through the shared library share: an OpenCL
// context on the test platform, and a cache opened from KCACHE_* pointing at
// the test's own store and the kcache-jit built here.

#include <cstddef>
#include <cstdlib>
#include <string>

#include "kcache/kcache.h"
#include "temp_dir.hpp"

namespace kcache::test {

class CApiTest : public TempDirTest {
  protected:
    static void SetUpTestSuite();
    static void TearDownTestSuite();
    void SetUp() override;
    void TearDown() override;

    // The cache SetUp opened (KCACHE_DIR under dir()).
    kcache_cache* cache() const { return cache_; }

    static cl_device_id device_;
    static cl_context context_;

  private:
    kcache_cache* cache_ = nullptr;
};

// A caller kernel `scale`: out[i] = in[i] * k + 7.
extern const char* const kScaleSource;

// The bytes of `s` from `offset` on, each set to `value`.
template <class T>
void fill_tail(T& s, std::size_t offset, unsigned char value) {
    auto* bytes = reinterpret_cast<unsigned char*>(&s);
    for (std::size_t i = offset; i < sizeof s; ++i) {
        bytes[i] = value;
    }
}

}  // namespace kcache::test
