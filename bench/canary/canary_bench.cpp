// The driver canary's cost (bench/canary/README.md), on the test platform's
// first device (KCACHE_TEST_PLATFORM, default PoCL):
//
//   1. canary wall time: the default set, cold (a fresh driver cache: PoCL's
//      POCL_CACHE_DIR, or CUDA_CACHE_PATH on NVIDIA) and again warm, in the
//      canary's shares and, side by side, with one helper per variant;
//   2. the first request after a driver change, under KCACHE_CANARY=off, warn
//      and enforce: a process of its own per run, a driver version never seen
//      (reported by the canary tests' OpenCL layer), an empty store and a cold
//      driver cache; then a second process on the same driver and store (its
//      first request: a store hit, and the stored verdicts read).
//
//   canary_bench [--reps N] [--kernel NAME] [--layer SO] [--jit PATH] [--verify PATH]
//
// Medians of N runs (default 5), in milliseconds. The program re-executes
// itself (--child …) for each first request.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "kcache/canary/canary.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/service/service_api.hpp"
#include "temp_path.hpp"
#include "test_platform.hpp"

namespace {

using namespace kcache;
using Ms = std::chrono::duration<double, std::milli>;

#ifndef KCACHE_BENCH_LAYER
#define KCACHE_BENCH_LAYER ""
#define KCACHE_BENCH_JIT ""
#define KCACHE_BENCH_VERIFY ""
#endif

struct Options {
    int reps = 5;
    std::string kernel = "dot";
    std::string layer = KCACHE_BENCH_LAYER;
    std::string jit = KCACHE_BENCH_JIT;
    std::string verify = KCACHE_BENCH_VERIFY;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty()      ? 0
           : v.size() % 2 ? v[v.size() / 2]
                          : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Environment of a run on driver `driver` with a driver cache in `cache_dir`.
std::vector<std::string> run_env(const Options& o, const std::string& driver,
                                 const std::filesystem::path& cache_dir) {
    return {"OPENCL_LAYERS=" + o.layer, "KCACHE_FAULT_DRIVER=" + driver,
            "POCL_CACHE_DIR=" + cache_dir.string(), "CUDA_CACHE_PATH=" + cache_dir.string()};
}

void set_env(const std::vector<std::string>& settings) {
    for (const std::string& s : settings) {
        const std::size_t eq = s.find('=');
        ::setenv(s.substr(0, eq).c_str(), s.substr(eq + 1).c_str(), 1);
    }
}

device_db::DeviceIdentity first_device() {
    auto listed = device_db::list_opencl_devices();
    if (listed) {
        for (const device_db::OpenClDevice& d : listed->devices) {
            if (d.identity.platform_name.find(test::test_platform_name()) != std::string::npos) {
                return d.identity;
            }
        }
    }
    std::cerr << "canary_bench: no device of platform " << test::test_platform_name() << "\n";
    std::exit(2);
}

// The baseline the canary's shares replace: one kcache-verify per variant,
// as many at once as the canary runs helpers.
long long one_helper_per_variant(const device_db::DeviceIdentity& d,
                                 const std::vector<kernels::Variant>& set,
                                 const canary::RunOptions& options, bool& suspect) {
    const auto start = std::chrono::steady_clock::now();
    const unsigned parallel = std::min(std::max(1u, std::thread::hardware_concurrency()), 4u);
    std::atomic<std::size_t> next{0};
    std::atomic<bool> any_suspect{false};
    const auto work = [&] {
        for (std::size_t i = next++; i < set.size(); i = next++) {
            any_suspect = canary::run_canary(d, {set[i]}, options).suspect() || any_suspect;
        }
    };
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < parallel; ++t) {
        threads.emplace_back(work);
    }
    for (std::thread& t : threads) {
        t.join();
    }
    suspect = any_suspect;
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start)
        .count();
}

// Part 1: the default set's wall time, cold then warm, per run, in shares
// (the canary) and with one helper per variant (the baseline), the two in
// turns within each run (each on its own driver version and driver cache).
void canary_wall(const Options& o, const device_db::DeviceIdentity& device) {
    std::vector<double> cold, warm, base_cold, base_warm, ratio_cold, ratio_warm;
    for (int rep = 0; rep < o.reps; ++rep) {
        double ms[2][2] = {};  // [shares, baseline][cold, warm]
        for (int turn = 0; turn < 2; ++turn) {
            const int which = (turn + rep) % 2;
            const auto dir = test::make_temp_dir("canary-bench-wall");
            device_db::DeviceIdentity d = device;
            d.driver_version = "bench-wall-" + std::to_string(rep) + "-" + std::to_string(which);
            set_env(run_env(o, d.driver_version, dir));
            canary::RunOptions options{o.verify, 1000u + static_cast<unsigned>(rep),
                                       std::chrono::seconds(60), 0};
            for (int pass = 0; pass < 2; ++pass) {
                bool suspect = false;
                if (which == 0) {
                    const canary::Record r = canary::run_canary(d, canary::default_set(d), options);
                    ms[0][pass] = static_cast<double>(r.wall_ms);
                    suspect = r.suspect();
                } else {
                    ms[1][pass] = static_cast<double>(
                        one_helper_per_variant(d, canary::default_set(d), options, suspect));
                }
                if (suspect) {
                    std::cerr << "canary_bench: a clean driver was found suspect\n";
                }
            }
            std::filesystem::remove_all(dir);
        }
        cold.push_back(ms[0][0]);
        warm.push_back(ms[0][1]);
        base_cold.push_back(ms[1][0]);
        base_warm.push_back(ms[1][1]);
        ratio_cold.push_back(ms[0][0] / std::max(1.0, ms[1][0]));
        ratio_warm.push_back(ms[0][1] / std::max(1.0, ms[1][1]));
    }
    std::printf("canary wall time, default set of %zu variants on %s (median of %d, ms)\n",
                canary::default_set(device).size(), device.name.c_str(), o.reps);
    std::printf("  %-18s %10s %22s %8s\n", "", "in shares", "one helper per variant", "ratio");
    std::printf("  %-18s %10.0f %22.0f %8.2f\n", "cold driver cache", median(cold),
                median(base_cold), median(ratio_cold));
    std::printf("  %-18s %10.0f %22.0f %8.2f\n", "warm driver cache", median(warm),
                median(base_warm), median(ratio_warm));
}

// One first request in a child: "first_ms close_ms status" on stdout.
int child(const std::string& policy, const std::filesystem::path& store, const Options& o) {
    Config c;
    c.dir = store;
    c.jit_helper = o.jit;
    c.canary = policy == "off"    ? CanaryPolicy::off
               : policy == "warn" ? CanaryPolicy::warn
                                  : CanaryPolicy::enforce;
    cl_device_id device = test::find_test_device();
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) {
        return 2;
    }
    const auto start = std::chrono::steady_clock::now();
    auto cache = Cache::open(c);
    if (!cache) {
        return 2;
    }
    KernelRequest r;
    r.kernel = o.kernel;
    Program p = cache->program(context, device, r);
    const auto served = std::chrono::steady_clock::now();
    cache.reset();  // waits for a canary running in the background
    const auto closed = std::chrono::steady_clock::now();
    std::printf("%.1f %.1f %s\n", Ms(served - start).count(), Ms(closed - served).count(),
                to_string(p.outcome().status));
    clReleaseContext(context);
    return 0;
}

struct Sample {
    double first = 0, close = 0;
    bool ok = false;
};

Sample spawn_child(const Options& o, const std::string& policy, const std::filesystem::path& store,
                   const std::vector<std::string>& env) {
    compiler::SpawnSpec spec;
    spec.program = "/proc/self/exe";
    char self[4096] = {};
    if (::readlink("/proc/self/exe", self, sizeof self - 1) > 0) {
        spec.program = self;
    }
    spec.args = {"--child", policy, store.string(), "--kernel", o.kernel, "--jit", o.jit};
    spec.env_overrides = env;
    const auto r = compiler::run(spec, compiler::Clock::now() + std::chrono::minutes(5));
    Sample s;
    char status[64] = {};
    s.ok = std::sscanf(r.out.c_str(), "%lf %lf %63s", &s.first, &s.close, status) == 3 &&
           std::string(status) == "ok";
    if (!s.ok) {
        std::cerr << "canary_bench: child (" << policy << ") failed: " << r.out << r.err << "\n";
    }
    return s;
}

// Part 2: the first request after a driver change, per policy.
void first_requests(const Options& o) {
    std::printf("\nfirst request for %s after a driver change (median of %d, ms)\n",
                o.kernel.c_str(), o.reps);
    std::printf("  %-8s %14s %16s %22s\n", "canary", "first request", "cache close",
                "next process's first");
    for (const char* policy : {"off", "warn", "enforce"}) {
        std::vector<double> first, close, next;
        for (int rep = 0; rep < o.reps; ++rep) {
            const auto dir = test::make_temp_dir("canary-bench-first");
            const auto env = run_env(o, std::string("bench-") + policy + "-" + std::to_string(rep),
                                     dir / "driver-cache");
            const Sample a = spawn_child(o, policy, dir / "store", env);
            const Sample b = spawn_child(o, policy, dir / "store", env);
            if (a.ok && b.ok) {
                first.push_back(a.first);
                close.push_back(a.close);
                next.push_back(b.first);
            }
            std::filesystem::remove_all(dir);
        }
        std::printf("  %-8s %14.0f %16.0f %22.1f\n", policy, median(first), median(close),
                    median(next));
    }
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    std::vector<std::string> args(argv + 1, argv + argc);
    std::string child_policy, child_store;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        const bool has = i + 1 < args.size();
        if (a == "--reps" && has) {
            o.reps = std::max(1, std::atoi(args[++i].c_str()));
        } else if (a == "--kernel" && has) {
            o.kernel = args[++i];
        } else if (a == "--layer" && has) {
            o.layer = args[++i];
        } else if (a == "--jit" && has) {
            o.jit = args[++i];
        } else if (a == "--verify" && has) {
            o.verify = args[++i];
        } else if (a == "--child" && i + 2 < args.size()) {
            child_policy = args[++i];
            child_store = args[++i];
        } else {
            std::cerr << "usage: canary_bench [--reps N] [--kernel NAME] [--layer SO] "
                         "[--jit PATH] [--verify PATH]\n";
            return 64;
        }
    }
    if (!child_policy.empty()) {
        return child(child_policy, child_store, o);
    }
    if (o.layer.empty() || o.jit.empty() || o.verify.empty()) {
        std::cerr << "canary_bench: --layer, --jit and --verify are needed outside the build\n";
        return 64;
    }
    set_env({"OPENCL_LAYERS=" + o.layer});
    canary_wall(o, first_device());
    first_requests(o);
    return 0;
}
