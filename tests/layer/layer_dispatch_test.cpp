// The layer's dispatch table (label layer): clInitLayer takes only the entry
// points that receive or return a program and those that look for platforms
// or create a context (where the cache starts opening); every other entry,
// the enqueue
// calls among them, is the driver's own, so a call the layer does not cache
// costs nothing more than the loader's dispatch.

#include <dlfcn.h>

#include <gtest/gtest.h>

#include <CL/cl_icd.h>
#include <CL/cl_layer.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>

namespace kcache::test {
namespace {

constexpr std::size_t kEntries = sizeof(_cl_icd_dispatch) / sizeof(void*);

#define KCACHE_SLOT(name) (offsetof(_cl_icd_dispatch, name) / sizeof(void*))

// The entries the layer takes (docs/design.md, "The OpenCL layer").
const std::set<std::size_t> kLayerEntries = {KCACHE_SLOT(clGetPlatformIDs),
                                             KCACHE_SLOT(clCreateContext),
                                             KCACHE_SLOT(clCreateContextFromType),
                                             KCACHE_SLOT(clCreateProgramWithSource),
                                             KCACHE_SLOT(clCreateProgramWithIL),
                                             KCACHE_SLOT(clCreateProgramWithBinary),
                                             KCACHE_SLOT(clRetainProgram),
                                             KCACHE_SLOT(clReleaseProgram),
                                             KCACHE_SLOT(clGetProgramInfo),
                                             KCACHE_SLOT(clGetProgramBuildInfo),
                                             KCACHE_SLOT(clSetProgramReleaseCallback),
                                             KCACHE_SLOT(clSetProgramSpecializationConstant),
                                             KCACHE_SLOT(clCreateKernel),
                                             KCACHE_SLOT(clCreateKernelsInProgram),
                                             KCACHE_SLOT(clGetKernelInfo),
                                             KCACHE_SLOT(clReleaseKernel),
                                             KCACHE_SLOT(clBuildProgram),
                                             KCACHE_SLOT(clCompileProgram),
                                             KCACHE_SLOT(clLinkProgram)};

using InitLayer = cl_int(CL_API_CALL*)(cl_uint, const _cl_icd_dispatch*, cl_uint*,
                                       const _cl_icd_dispatch**);

TEST(LayerDispatch, OnlyProgramPlatformAndContextEntriesAreTheLayersEveryOtherIsTheDrivers) {
    void* layer = ::dlopen(KCACHE_TEST_LAYER_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(layer, nullptr) << ::dlerror();
    auto init = reinterpret_cast<InitLayer>(::dlsym(layer, "clInitLayer"));
    ASSERT_NE(init, nullptr);

    // A target table of distinct markers: never called, only compared.
    void* slots[kEntries];
    for (std::size_t i = 0; i < kEntries; ++i) {
        slots[i] = reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x1000 + 16 * i));
    }
    _cl_icd_dispatch target{};
    std::memcpy(&target, slots, sizeof target);
    cl_uint n = 0;
    const _cl_icd_dispatch* out = nullptr;
    ASSERT_EQ(init(static_cast<cl_uint>(kEntries), &target, &n, &out), CL_SUCCESS);
    ASSERT_EQ(n, kEntries);
    ASSERT_NE(out, nullptr);
    void* const* got = reinterpret_cast<void* const*>(out);
    for (std::size_t i = 0; i < kEntries; ++i) {
        if (kLayerEntries.count(i) != 0) {
            EXPECT_NE(got[i], slots[i]) << "entry " << i << " should be the layer's";
        } else {
            EXPECT_EQ(got[i], slots[i]) << "entry " << i << " should be the driver's";
        }
    }
    EXPECT_EQ(out->clEnqueueNDRangeKernel, target.clEnqueueNDRangeKernel);
    EXPECT_EQ(out->clSetKernelArg, target.clSetKernelArg);
    EXPECT_EQ(out->clFinish, target.clFinish);
}

}  // namespace
}  // namespace kcache::test
