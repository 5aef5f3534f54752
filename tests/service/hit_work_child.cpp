// One process's requests, counted (hit_work_test.cpp runs it as a child):
//
//   hit_work_child [prepared] HIT...   HIT is `same` (the context of the
//                           first request) or `new` (a context of its own,
//                           made before counting starts); `prepared` opens
//                           the cache and learns the device (Cache::prepare)
//                           before counting starts
//
// Opens the cache from the environment (Cache::open_default), asks for the
// registry kernel `dot` once per HIT on the test platform's device, closes
// the cache (joining what the requests started in the background) and
// prints one JSON object on stdout: the work counts from before the open to
// after the close (kcache::work's, of every thread, and the count layer's,
// when OPENCL_LAYERS loaded it), the rung of each answer and the size of the
// binary loaded. Exits 1 when a request fails.

#define KCACHE_TEST_INTERNAL_API
#include <dlfcn.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "kcache/common/work.hpp"
#include "kcache/observe/names.hpp"
#include "kcache/service/service_api.hpp"
#include "test_platform.hpp"

namespace {

using namespace kcache;

constexpr const char* kLayerCounts[] = {"cl_queries", "cl_programs_made", "cl_builds",
                                        "cl_calls_other_threads"};
constexpr std::size_t kLayerItems = sizeof kLayerCounts / sizeof kLayerCounts[0];
using LayerCounts = std::array<std::uint64_t, kLayerItems>;

// The count layer's counts now (zeros when it is not loaded).
LayerCounts layer_counts() {
    LayerCounts out{};
    void* self = ::dlopen(KCACHE_COUNT_LAYER, RTLD_NOW | RTLD_NOLOAD);
    if (self == nullptr) {
        return out;
    }
    using Read = void (*)(std::uint64_t*, std::size_t);
    if (auto read = reinterpret_cast<Read>(::dlsym(self, "kcache_count_layer_read"))) {
        read(out.data(), out.size());
    }
    ::dlclose(self);
    return out;
}

std::size_t binary_size(cl_program p) {
    std::size_t size = 0;
    clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
    return size;
}

// The cache of the environment, and the device learnt when `prepare`; null
// after saying why not.
std::unique_ptr<Cache> open_cache(cl_device_id device, bool prepare) {
    Outcome o;
    auto cache = Cache::open_default(&o);
    if (cache && prepare) {
        o = cache->prepare(device);
    }
    if (!cache || o.status != StatusCode::ok) {
        std::fprintf(stderr, "open: %s\n", o.message.c_str());
        return nullptr;
    }
    return cache;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s same|new...\n", argv[0]);
        return 2;
    }
    cl_device_id device = test::find_test_device();
    if (device == nullptr) {
        std::fprintf(stderr, "no device on %s\n", test::test_platform_name().c_str());
        return 1;
    }
    const bool prepared = std::string(argv[1]) == "prepared";
    std::vector<cl_context> contexts;
    for (int i = 0; i < argc; ++i) {  // contexts[0]: the first request's; one per `new`
        if (i == 0 || std::string(argv[i]) == "new") {
            contexts.push_back(clCreateContext(nullptr, 1, &device, nullptr, nullptr, nullptr));
        }
    }
    std::unique_ptr<Cache> cache = prepared ? open_cache(device, true) : nullptr;
    const work::Snapshot before = work::snapshot();
    const LayerCounts layer_before = layer_counts();
    std::string rungs;
    std::vector<Program> programs;  // their sizes asked for once counting is over
    {
        if (!cache && !(cache = open_cache(device, false))) {
            return 1;
        }
        std::size_t next_context = 1;
        for (int i = prepared ? 2 : 1; i < argc; ++i) {
            const bool fresh = std::string(argv[i]) == "new";
            auto p = cache->program(fresh ? contexts[next_context++] : contexts[0], device,
                                    KernelRequest{"dot", {}, {}, Mode::blocking});
            if (p.outcome().status != StatusCode::ok) {
                std::fprintf(stderr, "request %d: %s\n", i, p.outcome().message.c_str());
                return 1;
            }
            rungs +=
                std::string(rungs.empty() ? "" : ",") + "\"" + to_string(p.outcome().rung) + "\"";
            programs.push_back(std::move(p));
        }
        cache.reset();  // closed: what the requests started is joined
    }
    const work::Snapshot after = work::snapshot();
    const LayerCounts layer_after = layer_counts();
    std::printf("{\"rungs\": [%s], \"binary_bytes\": %zu", rungs.c_str(),
                binary_size(programs.back().get()));
    for (std::size_t i = 0; i < work::kItems; ++i) {
        std::printf(", \"%s\": %llu", work::kNames[i],
                    static_cast<unsigned long long>(after[i] - before[i]));
    }
    for (std::size_t i = 0; i < kLayerItems; ++i) {
        std::printf(", \"%s\": %llu", kLayerCounts[i],
                    static_cast<unsigned long long>(layer_after[i] - layer_before[i]));
    }
    std::printf("}\n");
    programs.clear();
    for (cl_context c : contexts) {
        clReleaseContext(c);
    }
    return 0;
}
