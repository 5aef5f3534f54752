// Benchmarks of the compilers under the watchdog (see README.md here):
//   BM_WatchdogOvershoot     time past the deadline until a hung compile is killed and reaped
//   BM_InProcessBuild        PoCL build of a small kernel in this process (the baseline)
//   BM_HelperJit             the same build through kcache-jit (spawn, select, build, validate)
//   BM_FirstLaunch{Unwarmed,Warmed,WarmedAfterAnswer}  first launch after loading a
//                            helper-built binary: none, the warm-up before the answer, the
//                            warmed binary a pooled helper sends after its answer (the
//                            cache's way on CPU devices)

#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "jit_support.hpp"
#include "kcache/cl/handles.hpp"
#include "temp_path.hpp"

namespace {

using namespace kcache;
using namespace std::chrono_literals;
using compiler::Clock;

// Each build gets a new salt so that no PoCL cache can answer it.
int next_salt() {
    static int salt = 1000;
    return ++salt;
}

// PoCL caches for this process and for the helpers, fresh per run.
const std::string& helper_cache_dir() {
    static const std::string dir = test::make_temp_dir("bench-helper-pocl").string();
    return dir;
}

double seconds(std::chrono::nanoseconds ns) {
    return std::chrono::duration<double>(ns).count();
}

double max_of(const std::vector<double>& v) {
    return *std::max_element(v.begin(), v.end());
}

void BM_WatchdogOvershoot(benchmark::State& state) {
    const auto deadline_after = std::chrono::milliseconds(state.range(0));
    compiler::JitRequest q;
    q.device = test::pocl_device();
    q.source = test::nested_macro_kernel(17);
    const auto jit = test::pocl_jit(helper_cache_dir());
    for (auto _ : state) {
        const auto start = Clock::now();
        auto r = jit.compile(q, start + deadline_after);
        const auto overshoot = Clock::now() - (start + deadline_after);
        if (r.ok() || r.error().kind != compiler::JitErrc::timeout) {
            state.SkipWithError("compile did not time out");
            break;
        }
        state.SetIterationTime(seconds(overshoot));
    }
}
BENCHMARK(BM_WatchdogOvershoot)
    ->Arg(500)
    ->Iterations(1)
    ->Repetitions(20)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->ComputeStatistics("max", max_of);

void BM_InProcessBuild(benchmark::State& state) {
    cl_platform_id platform = nullptr;
    cl_device_id dev = nullptr;
    clGetPlatformIDs(1, &platform, nullptr);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr);
    cl_int e = CL_SUCCESS;
    cl::ContextHandle ctx(clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &e));
    for (auto _ : state) {
        const std::string source = test::axpb_source(next_salt());
        const char* src = source.c_str();
        cl::ProgramHandle p(clCreateProgramWithSource(ctx.get(), 1, &src, nullptr, &e));
        if (clBuildProgram(p.get(), 1, &dev, nullptr, nullptr, nullptr) != CL_SUCCESS) {
            state.SkipWithError("in-process build failed");
            break;
        }
        std::size_t size = 0;
        clGetProgramInfo(p.get(), CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
        benchmark::DoNotOptimize(size);
    }
}
BENCHMARK(BM_InProcessBuild)->Iterations(3)->Repetitions(5)->Unit(benchmark::kMillisecond);

void BM_HelperJit(benchmark::State& state) {
    const auto jit = test::pocl_jit(helper_cache_dir());
    double build_ms = 0;
    double select_ms = 0;
    double validate_ms = 0;
    for (auto _ : state) {
        compiler::JitRequest q;
        q.device = test::pocl_device();
        q.source = test::axpb_source(next_salt());
        q.entry_points = {"axpb"};
        auto r = jit.compile(q, Clock::now() + 60s);
        if (!r.ok()) {
            state.SkipWithError(r.error().message.c_str());
            break;
        }
        build_ms += r->timings.helper.build_us / 1000.0;
        select_ms += r->timings.helper.select_us / 1000.0;
        validate_ms += r->timings.helper.validate_us / 1000.0;
    }
    // Where the helper's time goes: platform start-up and device selection,
    // the build itself, loading the binary back.
    const auto avg = benchmark::Counter::kAvgIterations;
    state.counters["select_ms"] = benchmark::Counter(select_ms, avg);
    state.counters["build_ms"] = benchmark::Counter(build_ms, avg);
    state.counters["validate_ms"] = benchmark::Counter(validate_ms, avg);
}
BENCHMARK(BM_HelperJit)->Iterations(3)->Repetitions(5)->Unit(benchmark::kMillisecond);

enum class Warm { none, before_answer, after_answer };

void first_launch(benchmark::State& state, Warm warm) {
    compiler::JitConfig config{
        test::jit_helper_path(), {"POCL_CACHE_DIR=" + helper_cache_dir()}, {}};
    config.pool_size = warm == Warm::after_answer ? 1 : 0;
    const compiler::JitCompiler jit(config);
    double second_ms = 0;
    for (auto _ : state) {
        const int salt = next_salt();
        compiler::JitRequest q;
        q.device = test::pocl_device();
        q.source = test::axpb_source(salt);
        q.entry_points = {"axpb"};
        if (warm != Warm::none) {
            q.warmup = compiler::WarmupLaunch{1, {4096, 1, 1}, {64, 1, 1}, 4096 * 4};
            q.warm_after_reply = warm == Warm::after_answer;
        }
        std::string warmed;
        auto r = jit.compile(q, Clock::now() + 60s, [&](auto second) {
            if (second && second->warmed) {
                warmed = std::move(second->binary);
            }
        });
        jit.drain();
        const std::string& binary = warm == Warm::after_answer ? warmed : r->binary;
        test::LaunchTimes times;
        // a = 1, b = 3: every c is 2 + 3 + salt.
        if (!r.ok() || binary.empty() ||
            test::run_axpb_binary(binary, 4096, 64, &times) != 5.0f + salt) {
            state.SkipWithError("compile or launch failed");
            break;
        }
        state.SetIterationTime(times.first_ms / 1000.0);
        second_ms += times.second_ms;
    }
    // The second launch is the floor any launch pays on this machine now.
    state.counters["second_launch_ms"] =
        benchmark::Counter(second_ms, benchmark::Counter::kAvgIterations);
}

void BM_FirstLaunchUnwarmed(benchmark::State& state) {
    first_launch(state, Warm::none);
}
void BM_FirstLaunchWarmed(benchmark::State& state) {
    first_launch(state, Warm::before_answer);
}
void BM_FirstLaunchWarmedAfterAnswer(benchmark::State& state) {
    first_launch(state, Warm::after_answer);
}
BENCHMARK(BM_FirstLaunchUnwarmed)
    ->Iterations(1)
    ->Repetitions(7)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->ComputeStatistics("max", max_of);
BENCHMARK(BM_FirstLaunchWarmed)
    ->Iterations(1)
    ->Repetitions(7)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->ComputeStatistics("max", max_of);
BENCHMARK(BM_FirstLaunchWarmedAfterAnswer)
    ->Iterations(1)
    ->Repetitions(7)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->ComputeStatistics("max", max_of);

}  // namespace

int main(int argc, char** argv) {
    test::use_private_pocl_cache();
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    std::error_code ec;
    std::filesystem::remove_all(helper_cache_dir(), ec);
    return 0;
}
