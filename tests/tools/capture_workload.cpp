// capture_workload: an operator library's process as the capture round trip
// test runs it. Through the public C++ API only (libkcache.so), on the test
// platform's first device, it asks for the registry kernel `dot` (f32) and
// for a kernel of its own, then prints one line per request
// ("rung status") and the process's JIT compiles ("jit_compiles N").
// Exit 1 when a request fails.

#include <cstdio>
#include <string>
#include <vector>

#include "kcache/kcache.hpp"
#include "test_platform.hpp"

namespace {

const char* kOwnSource =
    "kernel void scale(global float* x, float a) { x[get_global_id(0)] *= a; }\n";

cl_device_id test_device() {
    cl_uint n = 0;
    clGetPlatformIDs(0, nullptr, &n);
    std::vector<cl_platform_id> platforms(n);
    clGetPlatformIDs(n, platforms.data(), nullptr);
    for (cl_platform_id p : platforms) {
        char name[256] = {};
        clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
        cl_device_id d = nullptr;
        if (std::string(name).find(kcache::test::test_platform_name()) != std::string::npos &&
            clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, nullptr) == CL_SUCCESS) {
            return d;
        }
    }
    return nullptr;
}

bool report(const kcache::Program& p) {
    std::printf("%s %s\n", kcache::to_string(p.outcome().rung),
                kcache::to_string(p.outcome().status));
    return p.ok();
}

}  // namespace

int main() {
    cl_device_id device = test_device();
    cl_int err = CL_SUCCESS;
    cl_context context =
        device ? clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err) : nullptr;
    auto cache = context ? kcache::Cache::open_default() : nullptr;
    if (!cache) {
        std::fprintf(stderr, "capture_workload: no device, context or cache\n");
        return 2;
    }
    kcache::KernelRequest dot;
    dot.kernel = "dot";
    dot.params = {{"dtype", "f32"}};
    kcache::SourceRequest own;
    own.name = "scale";
    own.source = kOwnSource;
    own.options = "-cl-mad-enable";
    bool ok = report(cache->program(context, device, dot));
    ok = report(cache->program(context, device, own)) && ok;
    std::printf("jit_compiles %llu\n",
                static_cast<unsigned long long>(cache->stats().jit_compiles));
    cache.reset();
    clReleaseContext(context);
    return ok ? 0 : 1;
}
