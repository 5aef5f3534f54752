// A C++ caller built against kcache 0.2.0's headers (abi-0.2/), run against
// this tree's library: the calls whose types kept their 0.2 layout (open
// from the environment, programs, binaries, forget, names). Config and
// CacheStats grew since 0.2, so Cache::open(Config), load_config, config()
// and stats() are not called: libkcache.so.2 is not the ABI 0.2 built
// against, and a program built for 0.2 must be rebuilt (CHANGELOG). Exit 0
// when every call answered as 0.2 documents.
#include <kcache/kcache.hpp>

#include <cstdio>
#include <string>

namespace {

int failures = 0;

void expect(bool ok, const char* what, const kcache::Outcome& o) {
    std::printf("%s %s: %s at %s\n", ok ? "ok" : "FAILED", what, kcache::to_string(o.status),
                kcache::to_string(o.rung));
    if (!ok) {
        std::printf("  %s\n", o.message.c_str());
        ++failures;
    }
}

const char* kScale =
    "__kernel void scale(__global const float* in, __global float* out, float k) {\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = in[i] * k + 3.0f;\n"
    "}\n";

void requests(kcache::Cache& cache, cl_context ctx, cl_device_id dev) {
    kcache::KernelRequest miss{"dot", {}, std::nullopt, kcache::Mode::fail_fast};
    auto p = cache.program(ctx, dev, miss);
    expect(!p.ok() && p.outcome().status == kcache::StatusCode::not_cached, "fail-fast miss",
           p.outcome());
    kcache::KernelRequest dot{"dot", {{"dtype", "bf16"}}, std::nullopt, kcache::Mode::blocking};
    p = cache.program(ctx, dev, dot);
    expect(p.ok() && p.outcome().rung == kcache::Rung::jit && !p.outcome().key.empty(),
           "program (jit)", p.outcome());
    kcache::SourceRequest src;
    src.name = "scale";
    src.source = kScale;
    src.entry_points = {"scale"};
    auto s = cache.program(ctx, dev, src);
    expect(s.ok(), "program from source", s.outcome());
    dot.mode = kcache::Mode::fail_fast;
    auto b = cache.binary(ctx, dev, dot);
    expect(b.outcome.status == kcache::StatusCode::ok && !b.bytes.empty(), "binary", b.outcome);
    auto again = cache.program(ctx, dev, dot);
    expect(again.ok() && again.outcome().rung == kcache::Rung::in_process, "repeat (in process)",
           again.outcome());
}

}  // namespace

int main() {
    cl_platform_id platform = nullptr;
    cl_device_id dev = nullptr;
    if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr) != CL_SUCCESS) {
        std::puts("no OpenCL device");
        return 2;
    }
    cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, nullptr);
    std::printf("headers %s, library %s\n", KCACHE_VERSION_STRING, kcache::version());
    {
        kcache::Outcome opened;
        auto cache = kcache::Cache::open_default(&opened);
        expect(cache != nullptr, "open", opened);
        if (cache) {
            requests(*cache, ctx, dev);
            const std::size_t dropped = cache->forget(ctx);
            std::printf("%s forget: %zu\n", dropped > 0 ? "ok" : "FAILED", dropped);
            failures += dropped > 0 ? 0 : 1;
        }
    }
    clReleaseContext(ctx);
    return failures == 0 ? 0 : 1;
}
