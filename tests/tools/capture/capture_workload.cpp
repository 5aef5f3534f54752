// capture_workload: an operator library's process as the capture round trip
// test runs it. Through the public C++ API only (libkcache.so), on the test
// platform's first device, it asks for the registry kernel `dot` (f32) and
// for a kernel of its own, then prints one line per request
// ("rung status") and the process's JIT compiles ("jit_compiles N").
// Exit 1 when a request fails.

#include <cstdio>
#include <string>

#include "kcache/kcache.hpp"
#include "test_platform.hpp"

namespace {

const char* kOwnSource =
    "kernel void scale(global float* x, float a) { x[get_global_id(0)] *= a; }\n";

bool report(const kcache::Program& p) {
    std::printf("%s %s\n", kcache::to_string(p.outcome().rung),
                kcache::to_string(p.outcome().status));
    return p.ok();
}

}  // namespace

int main() {
    cl_device_id device = kcache::test::find_test_device();
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
