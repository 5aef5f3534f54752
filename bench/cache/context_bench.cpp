// A long-lived process with contexts that come and go (see README.md here):
//   BM_ResidentHitVsFloor  one Cache for the whole run, a new context per sample:
//                          Cache::program (answered from the resident bytes)
//                          vs the driver floor with the same build options
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

std::unique_ptr<Cache> open_resident_cache(const std::filesystem::path& dir) {
    Config c = cache_config(dir);
    c.max_resident_bytes = Config{}.max_resident_bytes;  // the default
    Outcome o;
    auto cache = Cache::open(c, &o);
    if (!cache) {
        die("Cache::open failed: " + o.message);
    }
    return cache;
}

// Two arms per iteration, order alternating, each in a new context (created
// and released untimed): the resident hit (the iteration time) and the floor.
void BM_ResidentHitVsFloor(benchmark::State& state) {
    const auto& k = kernel_of(state);
    const auto& bytes = seeded().bytes.at(k);
    const auto& options = rendered(k).options;
    auto cache = open_resident_cache(seeded().dir);
    {
        Context first = new_context();  // loads the bytes once (a store hit)
        require_rung(request(*cache, first.get(), k), Rung::user_store, "resident warm-up");
    }
    double hit_ms = 0, floor_ms = 0;
    std::chrono::nanoseconds took{};
    std::size_t turn = 0;
    for (auto _ : state) {
        for (std::size_t j = 0; j < 2; ++j) {
            Context ctx = new_context();
            const auto start = Clock::now();
            if ((turn + j) % 2 == 0) {
                Program p = request(*cache, ctx.get(), k);
                took = Clock::now() - start;
                hit_ms += std::chrono::duration<double, std::milli>(took).count();
                if (!p.outcome().resident) {
                    die("BM_ResidentHitVsFloor: not answered from the resident bytes");
                }
            } else {
                ProgramHandle p = program_from_bytes(ctx.get(), bytes, options);
                floor_ms += std::chrono::duration<double, std::milli>(Clock::now() - start).count();
            }
        }
        ++turn;
        state.SetIterationTime(seconds(took));
    }
    state.counters["floor_ms"] = benchmark::Counter(floor_ms, benchmark::Counter::kAvgIterations);
    state.counters["ratio"] = hit_ms / floor_ms;
    state.counters["store_hits"] = static_cast<double>(cache->stats().store_hits);
}

std::uint64_t resident_kib() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 1024;
}

// Resident growth in KiB over 1,000 rounds of `round` (after 50 untimed),
// read after `settle` (which waits for deferred releases).
template <class F, class S>
double kib_per_1000(F&& round, S&& settle) {
    for (int i = 0; i < 50; ++i) {
        round();
    }
    settle();
    const auto before = resident_kib();
    for (int i = 0; i < 1000; ++i) {
        round();
    }
    settle();
    return static_cast<double>(resident_kib()) - static_cast<double>(before);
}

void BM_ContextCycle(benchmark::State& state) {
    const auto& k = kernel_of(state);
    const auto& bytes = seeded().bytes.at(k);
    const auto& options = rendered(k).options;
    auto cache = open_resident_cache(seeded().dir);
    double kcache_kib = 0, floor_kib = 0;
    for (auto _ : state) {
        floor_kib += kib_per_1000(
            [&] {
                Context ctx = new_context();
                program_from_bytes(ctx.get(), bytes, options);
            },
            [] {});
        kcache_kib += kib_per_1000(
            [&] {
                Context ctx = new_context();
                Program p = request(*cache, ctx.get(), k);
                if (!p.ok()) {
                    die("BM_ContextCycle: " + p.outcome().message);
                }
            },
            [&] { cache->drain(std::chrono::seconds(60)); });
    }
    const auto avg = benchmark::Counter::kAvgIterations;
    state.counters["kcache_KiB_per_1000"] = benchmark::Counter(kcache_kib, avg);
    state.counters["floor_KiB_per_1000"] = benchmark::Counter(floor_kib, avg);
    state.counters["programs_released"] = static_cast<double>(cache->stats().programs_released);
}

BENCHMARK(BM_ResidentHitVsFloor)
    ->Apply(per_kernel)
    ->Iterations(30)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ContextCycle)->Arg(0)->Iterations(1)->Repetitions(3)->Unit(benchmark::kMillisecond);

}  // namespace
