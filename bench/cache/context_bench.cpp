// A long-lived process with contexts that come and go (see README.md here;
// the resident hit vs the floor is an arm of BM_StoreHitVsFloor):
//   BM_ContextCycle        resident memory per 1,000 contexts of "create a
//                          context, get a program, release both": kcache vs
//                          the same loop with clCreateProgramWithBinary +
//                          clBuildProgram and no kcache

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <fstream>

#include "seeded.hpp"

namespace {

using namespace kcache;
using namespace kcache::bench;
using Clock = std::chrono::steady_clock;

std::uint64_t resident_kib() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 1024;
}

// Resident growth in KiB over 1,000 rounds of `round` (after 50 untimed).
template <class F>
double kib_per_1000(F&& round) {
    for (int i = 0; i < 50; ++i) {
        round();
    }
    const auto before = resident_kib();
    for (int i = 0; i < 1000; ++i) {
        round();
    }
    return static_cast<double>(resident_kib()) - static_cast<double>(before);
}

void BM_ContextCycle(benchmark::State& state) {
    const auto& k = kernel_of(state);
    const auto& bytes = seeded().bytes.at(k);
    const auto& options = rendered(k).options;
    auto cache = open_resident_cache(seeded().dir);
    double kcache_kib = 0, floor_kib = 0;
    for (auto _ : state) {
        floor_kib += kib_per_1000([&] {
            Context ctx = new_context();
            program_from_bytes(ctx.get(), bytes, options);
        });
        kcache_kib += kib_per_1000([&] {
            Context ctx = new_context();
            Program p = request(*cache, ctx.get(), k);
            if (!p.ok()) {
                die("BM_ContextCycle: " + p.outcome().message);
            }
        });
    }
    const auto avg = benchmark::Counter::kAvgIterations;
    state.counters["kcache_KiB_per_1000"] = benchmark::Counter(kcache_kib, avg);
    state.counters["floor_KiB_per_1000"] = benchmark::Counter(floor_kib, avg);
    state.counters["programs_released"] = static_cast<double>(cache->stats().programs_released);
}

BENCHMARK(BM_ContextCycle)->Arg(0)->Iterations(1)->Repetitions(3)->Unit(benchmark::kMillisecond);

}  // namespace
