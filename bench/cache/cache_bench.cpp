// Benchmarks of the cache service on PoCL (see README.md here).
// Every benchmark takes the kernel as its argument (index into kernel_names());
// the step benchmarks are in steps_bench.cpp, main() and the child modes in main.cpp.
//   BM_DriverFloor        clCreateProgramWithBinary + clBuildProgram of the stored bytes
//   BM_StoreHit           Cache::program answered by the user store (new context each time)
//   BM_StoreHitVsFloor    both of the above (and Store::get + floor, and the resident
//                         hit of a Cache that keeps decoded bytes) in one loop: ratios
//   BM_StoreHitFreshCache a store hit through a newly opened Cache each time (probe included)
//   BM_InProcessHit       Cache::program answered in process (same cache and context)
//   BM_InProcessMemoBound a lower bound for the in-process rung (see README.md)
//   BM_ColdJit            empty store: Cache::program (helper JIT) + the first launch
//   BM_PoclCacheChild     a second process: source build answered by PoCL's warm kernel cache
//   BM_FloorChild         a second process: the floor, first load in that process
//   BM_KcacheHitChild     a second process: Cache::program answered by the user store
//   BM_KcacheHitChildPoclWarm  the same after PoCL loaded another binary in that process
//   BM_{Floor,KcacheHit}ChildWarmPoclDir  second process, PoCL's program directory warm

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

#include "kcache/store/store.hpp"
#include "seeded.hpp"

namespace {

using namespace kcache;
using namespace kcache::bench;
using Clock = std::chrono::steady_clock;

void BM_DriverFloor(benchmark::State& state) {
    const auto& k = kernel_of(state);
    const auto& bytes = seeded().bytes.at(k);
    const auto& options = rendered(k).options;
    for (auto _ : state) {
        Context ctx = new_context();
        const auto start = Clock::now();
        ProgramHandle p = program_from_bytes(ctx.get(), bytes, options);
        state.SetIterationTime(seconds(Clock::now() - start));
    }
    state.counters["binary_KB"] = static_cast<double>(bytes.size()) / 1024.0;
}

void BM_StoreHit(benchmark::State& state) {
    const auto& k = kernel_of(state);
    auto cache = open_cache(seeded().dir);
    for (auto _ : state) {
        Context ctx = new_context();  // nothing built in this context: the store answers
        const auto start = Clock::now();
        Program p = request(*cache, ctx.get(), k);
        state.SetIterationTime(seconds(Clock::now() - start));
        require_rung(p, Rung::user_store, "BM_StoreHit");
        p = Program();
        cache->forget(ctx.get());  // its context is destroyed here, untimed
    }
}

double cpu_ms_now() {
    timespec ts{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Wall and process CPU time summed over the runs of one arm.
struct Tally {
    double wall_ms = 0, cpu_ms = 0;
    // Runs `body` and adds its times; returns its wall time.
    template <class F>
    std::chrono::nanoseconds add(F&& body) {
        const double c0 = cpu_ms_now();
        const auto start = Clock::now();
        body();
        const auto took = Clock::now() - start;
        cpu_ms += cpu_ms_now() - c0;
        wall_ms += std::chrono::duration<double, std::milli>(took).count();
        return took;
    }
};

// Four arms side by side, each in a new context, in an order rotating every
// iteration: the store hit through Cache::program (the iteration time), the
// driver floor on the bytes already in memory, "by hand": Store::get of the
// entry then the floor on what it returned (get timed alone as well), and the
// resident hit: Cache::program of a second long-lived Cache that keeps the
// decoded bytes in memory (it calls forget(), untimed, before its context is
// released, as the store hit's arm does, so that every arm destroys its
// context outside the timing).
void BM_StoreHitVsFloor(benchmark::State& state) {
    const auto& k = kernel_of(state);
    const auto& bytes = seeded().bytes.at(k);
    const auto& options = rendered(k).options;
    const auto fields = device_db::jit_key_fields(identity(), input_of(k));
    auto cache = open_cache(seeded().dir);
    auto resident_cache = open_resident_cache(seeded().dir);
    auto store = store::Store::open(seeded().dir);
    if (!store) {
        die("cannot open the seeded store: " + store.error().message);
    }
    Tally hit, floor, by_hand, get, resident;
    std::chrono::nanoseconds took{};
    const std::function<void()> arms[] = {
        [&] {
            Context ctx = new_context();
            Program p;
            took = hit.add([&] { p = request(*cache, ctx.get(), k); });
            require_rung(p, Rung::user_store, "BM_StoreHitVsFloor");
            p = Program();
            cache->forget(ctx.get());  // its context is destroyed here, untimed
        },
        [&] {
            Context ctx = new_context();
            floor.add([&] { program_from_bytes(ctx.get(), bytes, options); });
        },
        [&] {
            Context ctx = new_context();
            by_hand.add([&] {
                std::vector<std::uint8_t> got;
                get.add([&] { got = std::move(store->get(fields)->bytes); });
                program_from_bytes(ctx.get(), got, options);
            });
        },
        [&] {
            Context ctx = new_context();
            Program p;
            resident.add([&] { p = request(*resident_cache, ctx.get(), k); });
            if (!p.outcome().resident) {
                die("BM_StoreHitVsFloor: not answered from the resident bytes");
            }
            p = Program();
            resident_cache->forget(ctx.get());
        }};
    {
        Context first = new_context();  // the resident cache loads the bytes once
        require_rung(request(*resident_cache, first.get(), k), Rung::user_store, "warm-up");
        resident_cache->forget(first.get());
    }
    std::size_t turn = 0;
    for (auto _ : state) {
        for (std::size_t j = 0; j < 4; ++j) {
            arms[(turn + j) % 4]();
        }
        ++turn;
        state.SetIterationTime(seconds(took));
    }
    const auto avg = benchmark::Counter::kAvgIterations;
    state.counters["floor_ms"] = benchmark::Counter(floor.wall_ms, avg);
    state.counters["get_ms"] = benchmark::Counter(get.wall_ms, avg);
    state.counters["floor_cpu_ms"] = benchmark::Counter(floor.cpu_ms, avg);
    state.counters["hit_cpu_ms"] = benchmark::Counter(hit.cpu_ms, avg);
    state.counters["get_cpu_ms"] = benchmark::Counter(get.cpu_ms, avg);
    state.counters["ratio"] = hit.wall_ms / floor.wall_ms;
    state.counters["cpu_ratio"] = hit.cpu_ms / floor.cpu_ms;
    state.counters["by_hand_ratio"] = by_hand.wall_ms / floor.wall_ms;
    state.counters["resident_ratio"] = resident.wall_ms / floor.wall_ms;
    state.counters["resident_cpu_ratio"] = resident.cpu_ms / floor.cpu_ms;
}

void BM_StoreHitFreshCache(benchmark::State& state) {
    const auto& k = kernel_of(state);
    Context ctx = new_context();
    for (auto _ : state) {
        auto cache = open_cache(seeded().dir);
        const auto start = Clock::now();
        Program p = request(*cache, ctx.get(), k);
        state.SetIterationTime(seconds(Clock::now() - start));
        require_rung(p, Rung::user_store, "BM_StoreHitFreshCache");
    }
}

void BM_InProcessHit(benchmark::State& state) {
    const auto& k = kernel_of(state);
    auto cache = open_cache(seeded().dir);
    Context ctx = new_context();
    require_rung(request(*cache, ctx.get(), k), Rung::user_store, "BM_InProcessHit warm-up");
    for (auto _ : state) {
        Program p = request(*cache, ctx.get(), k);
        if (p.outcome().rung != Rung::in_process) {
            require_rung(p, Rung::in_process, "BM_InProcessHit");
        }
        benchmark::DoNotOptimize(p.get());
    }
}

// What a repeat hit would cost if the service looked the request up before
// preparing it (the fix README.md suggests): a mutex, one map lookup keyed by
// (context, device, kernel name, parameters) and a program reference. Not the
// service's code: a lower bound to set target 2 against.
void BM_InProcessMemoBound(benchmark::State& state) {
    const auto& k = kernel_of(state);
    auto cache = open_cache(seeded().dir);
    Context ctx = new_context();
    Program built = request(*cache, ctx.get(), k);
    require_rung(built, Rung::user_store, "BM_InProcessMemoBound warm-up");
    using Slot =
        std::tuple<cl_context, cl_device_id, std::string, std::map<std::string, std::string>>;
    std::mutex mu;
    std::map<Slot, cl_program> memo;
    memo.emplace(Slot{ctx.get(), pocl_device(), k, {}}, built.get());
    KernelRequest q;
    q.kernel = k;
    for (auto _ : state) {
        cl_program p = nullptr;
        {
            std::lock_guard g(mu);
            auto it = memo.find(Slot{ctx.get(), pocl_device(), q.kernel, q.params});
            if (it != memo.end()) {
                p = it->second;
                clRetainProgram(p);
            }
        }
        if (p == nullptr) {
            die("memo missed");
        }
        benchmark::DoNotOptimize(p);
        clReleaseProgram(p);
    }
}

void BM_ColdJit(benchmark::State& state) {
    const auto& k = kernel_of(state);
    const std::string own_pocl = std::getenv("POCL_CACHE_DIR");
    double compile_ms = 0, launch_ms = 0;
    for (auto _ : state) {
        // A new store, and a new PoCL cache for the helper: nothing can answer but a build.
        ::setenv("POCL_CACHE_DIR", fresh_dir("pocl-cold").c_str(), 1);
        auto cache = open_cache(fresh_dir("cold-store"));
        Context ctx = new_context();
        const auto start = Clock::now();
        Program p = request(*cache, ctx.get(), k);
        const auto built = Clock::now();
        require_rung(p, Rung::jit, "BM_ColdJit");
        const auto launch = first_launch(ctx.get(), p.get(), k);
        state.SetIterationTime(seconds(built - start + launch));
        compile_ms += static_cast<double>(p.outcome().compile.count()) / 1e3;
        launch_ms += std::chrono::duration<double, std::milli>(launch).count();
    }
    ::setenv("POCL_CACHE_DIR", own_pocl.c_str(), 1);
    state.counters["helper_ms"] =
        benchmark::Counter(compile_ms, benchmark::Counter::kAvgIterations);
    state.counters["launch_ms"] = benchmark::Counter(launch_ms, benchmark::Counter::kAvgIterations);
}

// "FIRST_US SECOND_US" from a child; the first is the iteration time.
void time_child(benchmark::State& state, const std::vector<std::string>& args,
                const std::vector<std::string>& env) {
    double second_us = 0;
    for (auto _ : state) {
        std::istringstream in(run_child(args, env));
        double first = 0, second = 0;
        if (!(in >> first >> second)) {
            die("unreadable child output");
        }
        state.SetIterationTime(first / 1e6);
        second_us += second;
    }
    state.counters["second_in_child_us"] =
        benchmark::Counter(second_us, benchmark::Counter::kAvgIterations);
}

void BM_PoclCacheChild(benchmark::State& state) {
    const auto& k = kernel_of(state);
    const auto warm = fresh_dir("pocl-warm");
    const std::vector<std::string> env = {"POCL_KERNEL_CACHE=1", "POCL_CACHE_DIR=" + warm.string()};
    const std::vector<std::string> args = {"--child=pocl-build", k};
    run_child(args, env);  // the first process fills PoCL's cache
    time_child(state, args, env);
}

// The floor in a second process: its first (and second) load of the stored bytes.
// Writes the seeded bytes of `kernel` to a new file; returns its path.
std::string bytes_file(const std::string& kernel) {
    const auto file = fresh_dir("floor-bytes") / "binary";
    const auto& bytes = seeded().bytes.at(kernel);
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return file.string();
}

void BM_FloorChild(benchmark::State& state) {
    const auto& k = kernel_of(state);
    const std::vector<std::string> args = {"--child=floor", k, bytes_file(k)};
    time_child(state, args, {"POCL_CACHE_DIR=" + fresh_dir("pocl-child").string()});
}

void BM_KcacheHitChild(benchmark::State& state) {
    const auto& k = kernel_of(state);
    const std::vector<std::string> args = {"--child=kcache-hit", k, seeded().dir.string()};
    time_child(state, args, {"POCL_CACHE_DIR=" + fresh_dir("pocl-child").string()});
}

// As BM_KcacheHitChild, but the child first loads another kernel's binary
// (untimed), so PoCL's once-per-process start-up is paid before kcache's first
// request: what remains is kcache's own first-request cost.
void BM_KcacheHitChildPoclWarm(benchmark::State& state) {
    const auto& k = kernel_of(state);
    const auto& names = kernel_names();
    const auto& other = names.at((static_cast<std::size_t>(state.range(0)) + 1) % names.size());
    const std::vector<std::string> args = {"--child=kcache-hit", k, seeded().dir.string(), other,
                                           bytes_file(other)};
    time_child(state, args, {"POCL_CACHE_DIR=" + fresh_dir("pocl-child").string()});
}

// PoCL keeps an unpacked copy of each program in POCL_CACHE_DIR, a directory
// that outlives processes (~/.cache/pocl by default). These two run their
// children on one such directory that an untimed first child already filled,
// as BM_PoclCacheChild does for PoCL's own cache.
void BM_FloorChildWarmPoclDir(benchmark::State& state) {
    const auto& k = kernel_of(state);
    const std::vector<std::string> args = {"--child=floor", k, bytes_file(k)};
    const std::vector<std::string> env = {"POCL_CACHE_DIR=" + fresh_dir("pocl-dir").string()};
    run_child(args, env);
    time_child(state, args, env);
}

void BM_KcacheHitChildWarmPoclDir(benchmark::State& state) {
    const auto& k = kernel_of(state);
    const std::vector<std::string> args = {"--child=kcache-hit", k, seeded().dir.string()};
    const std::vector<std::string> env = {"POCL_CACHE_DIR=" + fresh_dir("pocl-dir").string()};
    run_child(args, env);
    time_child(state, args, env);
}

// Per kernel, `Iterations` runs that time themselves (UseManualTime), in ms.
template <int Iterations>
void per_kernel_timed(benchmark::internal::Benchmark* b) {
    per_kernel(b);
    b->Iterations(Iterations)->UseManualTime()->Unit(benchmark::kMillisecond);
}

// Per kernel, `Repetitions` repetitions of one run that times itself (a cold
// compile, a child process), in ms.
template <int Repetitions>
void per_kernel_runs(benchmark::internal::Benchmark* b) {
    per_kernel(b);
    b->Iterations(1)->Repetitions(Repetitions)->UseManualTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_DriverFloor)->Apply(per_kernel_timed<20>);
BENCHMARK(BM_StoreHit)->Apply(per_kernel_timed<20>);
BENCHMARK(BM_StoreHitVsFloor)->Apply(per_kernel_timed<30>);
BENCHMARK(BM_StoreHitFreshCache)->Apply(per_kernel_timed<10>);
BENCHMARK(BM_InProcessHit)->Apply(per_kernel)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_InProcessMemoBound)->Apply(per_kernel)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ColdJit)->Apply(per_kernel_runs<5>);
BENCHMARK(BM_PoclCacheChild)->Apply(per_kernel_runs<9>);
BENCHMARK(BM_FloorChild)->Apply(per_kernel_runs<9>);
BENCHMARK(BM_KcacheHitChild)->Apply(per_kernel_runs<9>);
BENCHMARK(BM_KcacheHitChildPoclWarm)->Apply(per_kernel_runs<9>);
BENCHMARK(BM_FloorChildWarmPoclDir)->Apply(per_kernel_runs<9>);
BENCHMARK(BM_KcacheHitChildWarmPoclDir)->Apply(per_kernel_runs<9>);

}  // namespace
