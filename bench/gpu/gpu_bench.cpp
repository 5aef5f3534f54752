// gpu_bench: kcache on a real GPU driver, measured side by side in one run.
//   gpu_bench bench        per registry kernel (default variant): cold JIT
//                          (empty store, helper process) vs a store hit that
//                          ends in a ready program vs the driver floor
//                          (clCreateProgramWithBinary + clBuildProgram from
//                          the same bytes in memory); then the watchdog on a
//                          slow kernel (deadline overshoot).
//   gpu_bench check-hits   in this (second) process, every variant the
//                          device supports must come from the store
//                          (fail_fast); exit 1 on any miss.
//   gpu_bench long-lived WORKDIR   hit_bench.cpp: a long-lived process with
//                          contexts coming and going (hit vs floor, the hit's
//                          steps, first hit in a fresh process, memory per
//                          1,000 contexts).
//   gpu_bench hit-parts WORKDIR    the long-lived process's section 1b alone
//                          (a resident hit split at the driver's calls).
// KCACHE_DIR names the warmed store (check-hits); bench uses its own dirs.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "gpu_common.hpp"
#include "jit_support.hpp"
#include "kcache/cl/program.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/service/service_api.hpp"

namespace {

using namespace gpu_bench;
using kcache::StatusCode;

double floor_ms(const Device& d, const std::vector<std::uint8_t>& bytes,
                const std::string& options) {
    auto t0 = Clock::now();
    const auto p = kcache::cl::program_from_binary(d.context, d.device, bytes, options);
    const double t = ms_since(t0);
    if (!p) {
        std::fprintf(stderr, "floor: %s\n", p.error().message.c_str());
    }
    return t;
}

int bench(const Device& d, const std::filesystem::path& root) {
    std::printf("%-18s %12s %12s %12s %10s %10s\n", "kernel", "cold JIT ms", "hit ms", "floor ms",
                "JIT/hit", "hit/floor");
    for (const auto& k : kcache::kernels::kernels()) {
        auto dir = root / ("bench-" + k.name);
        kcache::KernelRequest req{k.name, {}, std::chrono::milliseconds(120'000), {}};
        auto cold_cache = kcache::Cache::open(config_at(dir));
        auto t0 = Clock::now();
        auto cold = cold_cache->program(d.context, d.device, req);
        double cold_ms = ms_since(t0);
        if (!cold.ok() || cold.outcome().rung != kcache::Rung::jit) {
            std::printf("%-18s cold: %s\n", k.name.c_str(), cold.outcome().message.c_str());
            return 1;
        }
        auto bytes = binary_of(cold.get());
        const auto options =
            kcache::kernels::render(*kcache::kernels::make_variant(k.name))->options;
        std::vector<double> hits, floors;
        for (int i = 0; i < 15; ++i) {
            auto cache = kcache::Cache::open(config_at(dir));
            auto t1 = Clock::now();
            auto hit = cache->program(d.context, d.device, req);
            hits.push_back(ms_since(t1));
            if (hit.outcome().rung != kcache::Rung::user_store) {
                std::printf("%-18s expected a store hit, got %s\n", k.name.c_str(),
                            kcache::to_string(hit.outcome().rung));
                return 1;
            }
            floors.push_back(floor_ms(d, bytes, options));
        }
        double h = median(hits), f = median(floors);
        std::printf("%-18s %12.1f %12.3f %12.3f %9.0fx %9.2fx\n", k.name.c_str(), cold_ms, h, f,
                    cold_ms / h, h / f);
    }
    // The watchdog on a kernel that takes the driver's compiler a long time.
    auto cache = kcache::Cache::open(config_at(root / "bench-slow"));
    std::vector<double> overshoot;
    for (int i = 0; i < 5; ++i) {
        kcache::SourceRequest slow;
        slow.source = kcache::test::nested_macro_kernel(17) + "// " + std::to_string(i) + "\n";
        slow.deadline = std::chrono::milliseconds(2000);
        auto t0 = Clock::now();
        auto p = cache->program(d.context, d.device, slow);
        double t = ms_since(t0);
        std::printf("slow kernel %d: %s after %.0f ms\n", i, kcache::to_string(p.outcome().status),
                    t);
        if (p.outcome().status == StatusCode::timeout) {
            overshoot.push_back(t - 2000);
        }
    }
    if (!overshoot.empty()) {
        std::printf(
            "watchdog overshoot past a 2000 ms deadline: median %.1f ms, max %.1f ms (%zu)\n",
            median(overshoot), *std::max_element(overshoot.begin(), overshoot.end()),
            overshoot.size());
    }
    return 0;
}

int check_hits(const Device& d) {
    kcache::Outcome o;
    auto cache = kcache::Cache::open_default(&o);
    if (!cache) {
        std::printf("cannot open the cache: %s\n", o.message.c_str());
        return 1;
    }
    auto id = kcache::device_db::probe(d.device);
    int hits = 0, misses = 0, unsupported = 0;
    for (const auto& v : kcache::kernels::all_variants()) {
        if (!kcache::kernels::check_support(v, id->extensions)) {
            ++unsupported;
            continue;
        }
        kcache::KernelRequest req{
            v.kernel, {v.params.begin(), v.params.end()}, {}, kcache::Mode::fail_fast};
        auto p = cache->program(d.context, d.device, req);
        if (p.ok() && p.outcome().rung == kcache::Rung::user_store) {
            ++hits;
        } else {
            ++misses;
            std::printf("miss: %s: %s %s\n", v.id().c_str(), kcache::to_string(p.outcome().status),
                        p.outcome().message.c_str());
        }
    }
    std::printf("second process: %d hits, %d misses, %d unsupported on this device\n", hits, misses,
                unsupported);
    return misses == 0 && hits > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::string mode = argc > 1 ? argv[1] : "";
    Device d = first_gpu();
    if (!d.device) {
        std::printf("gpu_bench: no OpenCL GPU\n");
        return 2;
    }
    if (mode == "check-hits") {
        return check_hits(d);
    }
    if (mode == "bench" && argc == 3) {
        return bench(d, argv[2]);
    }
    if (mode == "long-lived" && argc == 3) {
        return long_lived(d, argv[2]);
    }
    if (mode == "hit-parts" && argc == 3) {
        return hit_parts_only(d, argv[2]);
    }
    if (mode == "child-first-hit" && argc == 4) {
        return child_first_hit(d, argv[2], argv[3]);
    }
    if (mode == "child-first-steps" && argc == 4) {
        return child_first_steps(d, argv[2], argv[3]);
    }
    if (mode == "child-first-floor" && argc == 4) {
        return child_first_floor(d, argv[2], argv[3]);
    }
    std::fprintf(stderr,
                 "usage: gpu_bench check-hits | gpu_bench bench WORKDIR | "
                 "gpu_bench long-lived WORKDIR | gpu_bench hit-parts WORKDIR\n");
    return 2;
}
