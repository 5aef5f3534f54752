// The loader's entry points of a test-only layer (test_layer.hpp).

#include "test_layer.hpp"

#include <algorithm>
#include <cstring>

namespace kcache::test {

cl_icd_dispatch g_next{};

namespace {

cl_icd_dispatch g_layer{};

}  // namespace
}  // namespace kcache::test

// The loader finds the layer by these two names (the build hides everything else).
extern "C" {
#pragma GCC visibility push(default)

CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info name, size_t size, void* value,
                                               size_t* size_ret) {
    if (name != CL_LAYER_API_VERSION) {
        return CL_INVALID_VALUE;
    }
    const cl_layer_api_version version = CL_LAYER_API_VERSION_100;
    if (size_ret) {
        *size_ret = sizeof version;
    }
    if (value) {
        if (size < sizeof version) {
            return CL_INVALID_VALUE;
        }
        std::memcpy(value, &version, sizeof version);
    }
    return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint entries, const cl_icd_dispatch* target,
                                            cl_uint* entries_ret,
                                            const cl_icd_dispatch** layer_ret) {
    using kcache::test::g_layer;
    using kcache::test::g_next;
    const std::size_t have = entries * sizeof(void*);
    std::memcpy(&g_next, target, std::min(have, sizeof g_next));
    g_layer = g_next;
    kcache::test::take_calls(g_layer);
    *entries_ret = static_cast<cl_uint>(sizeof g_layer / sizeof(void*));
    *layer_ret = &g_layer;
    return CL_SUCCESS;
}

#pragma GCC visibility pop
}  // extern "C"
