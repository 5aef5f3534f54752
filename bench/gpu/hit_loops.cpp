// gpu_bench long-lived, sections 4 and 5 (hit_bench.cpp says what each
// measures): a caller's loop of creating a context, asking for a kernel and
// releasing both, for its resident memory and for its time.

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <thread>

#include "hit_common.hpp"

namespace gpu_bench {
namespace {

std::uint64_t resident_kib() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 1024;
}

// Resident growth in KiB per 1,000 rounds of `round`: the size a second
// after the last round (a released context's memory is due back within about
// a second, releaser.hpp) against the size before the first; `peak_kib`, the
// largest growth seen on the way (read every 25 rounds), which includes what
// the process settles into once (the allocator's arenas, a driver's pools,
// the few contexts waiting for the releaser).
double kib_per_1000(int rounds, double& peak_kib, const std::function<bool()>& round) {
    const auto start = static_cast<double>(resident_kib());
    peak_kib = 0;
    int failed = 0;
    for (int i = 0; i < rounds; ++i) {
        failed += round() ? 0 : 1;
        if (i % 25 == 24) {
            peak_kib = std::max(peak_kib, static_cast<double>(resident_kib()) - start);
        }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    const double grown = static_cast<double>(resident_kib()) - start;
    if (failed > 0) {
        std::printf("   %d of %d rounds failed\n", failed, rounds);
    }
    return grown * 1000.0 / rounds;
}

void context_cycle(const Device& d, const std::filesystem::path& dir) {
    const char* env = std::getenv("GPU_BENCH_CONTEXTS");
    const int rounds = env != nullptr ? std::max(10, std::atoi(env)) : 1000;
    const std::string kernel = "dot";
    const Bytes bytes = stored_bytes(d, dir, kernel);
    const std::string options = rendered(kernel).options;
    auto cache = open_at(dir, true);
    std::printf(
        "\n4. resident memory per 1,000 contexts (%d rounds each: create a context, get"
        " %s, release both)\n",
        rounds, kernel.c_str());
    double floor_peak = 0, with_peak = 0;
    const double floor = kib_per_1000(rounds, floor_peak, [&] {
        Ctx ctx(d);
        return ctx.c != nullptr && floor_us(d, ctx.c, bytes, options) >= 0;
    });
    const double with = kib_per_1000(rounds, with_peak, [&] {
        Ctx ctx(d);
        return ctx.c != nullptr && cache->program(ctx.c, d.device, request_of(kernel)).ok();
    });
    std::printf(
        "no kcache: %+.0f KiB per 1,000 contexts (peak %+.0f KiB); kcache: %+.0f KiB per"
        " 1,000 contexts (peak %+.0f KiB; %llu programs released)\n",
        floor, floor_peak, with, with_peak,
        static_cast<unsigned long long>(cache->stats().programs_released));
}

// Section 5: the whole loop a caller that never calls forget() runs (create
// a context, ask for the kernel, release both), timed end to end against the
// same loop loading the stored bytes without kcache.
void whole_loop(const Device& d, const std::filesystem::path& dir) {
    const std::string kernel = "dot";
    const Bytes bytes = stored_bytes(d, dir, kernel);
    const std::string options = rendered(kernel).options;
    auto cache = open_at(dir, true);
    std::vector<double> t[2];
    bool wrong = false;
    const std::function<void()> arms[] = {
        [&] {
            const auto t0 = Clock::now();
            {
                Ctx ctx(d);
                wrong |= floor_us(d, ctx.c, bytes, options) < 0;
            }
            t[0].push_back(us_since(t0));
        },
        [&] {
            const auto t0 = Clock::now();
            {
                Ctx ctx(d);
                wrong |= !cache->program(ctx.c, d.device, request_of(kernel)).ok();
            }
            t[1].push_back(us_since(t0));
        }};
    rotate(arms, 2);
    const double f = median(t[0]), k = median(t[1]);
    std::printf(
        "\n5. whole loop, no forget(): create a context, get %s, release both (%d samples,"
        " medians, µs)\nwithout kcache %.1f, with kcache %.1f: %.2fx%s\n",
        kernel.c_str(), kSamples, f, k, k / f, wrong ? "  (FAILURE)" : "");
}

}  // namespace

void loops(const Device& d, const std::filesystem::path& dir, bool memory, bool time) {
    if (memory) {
        context_cycle(d, dir);
    }
    if (time) {
        whole_loop(d, dir);
    }
}

}  // namespace gpu_bench
