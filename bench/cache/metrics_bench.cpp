// What the metrics and the trace cost on the hit paths (README.md here,
// "Metrics and trace"). Each iteration is one round of arms in a rotating
// order, on the first kernel: two Caches on the seeded store that differ
// only in Config::metrics, and the metrics Cache again with the trace on
// (KCACHE_TRACE is process-wide: on for that arm only, to a fresh file),
// and a second metrics-off Cache, whose ratio to the first is the noise.
//   BM_MetricsRepeatHit  kRepeats repeat hits (same context) per arm; ns per hit
//   BM_MetricsStoreHit   kStoreHits store hits (a new context each) per arm; µs per hit
// The counters are the medians over the rounds of each arm's time per hit,
// and the medians of the per-round ratios to the metrics-off arm (paired:
// a load swing during a round moves all four arms).

#include <algorithm>
#include <functional>

#include "kcache/observe/trace.hpp"
#include "seeded.hpp"

namespace {

using namespace kcache;
using namespace kcache::bench;
using Clock = std::chrono::steady_clock;

constexpr int kRepeats = 2'000;
constexpr int kStoreHits = 4;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

std::unique_ptr<Cache> open_with_metrics(bool on) {
    Config c = cache_config(seeded().dir);
    c.metrics = on;
    auto cache = Cache::open(c);
    if (!cache) {
        die("cannot open the seeded store");
    }
    return cache;
}

// Runs the arms `off`, `on`, `traced` (each returning its time per hit in
// ns) and `off_again` (a second metrics-off cache: how far two identical arms
// differ, the noise) once per iteration in a rotating order, and reports
// their medians.
void rounds(benchmark::State& state, const std::function<double(Cache&)>& arm, double unit) {
    auto off = open_with_metrics(false);
    auto off_again = open_with_metrics(false);
    auto on = open_with_metrics(true);
    const auto trace_file = fresh_dir("trace") / "trace.json";
    std::vector<double> t_off, t_off_again, t_on, t_trace;
    int round = 0;
    for (auto _ : state) {
        const std::function<void()> arms[] = {
            [&] { t_off.push_back(arm(*off)); },
            [&] { t_off_again.push_back(arm(*off_again)); },
            [&] { t_on.push_back(arm(*on)); },
            [&] {
                trace::configure(trace_file.string(), 1ull << 40);
                t_trace.push_back(arm(*on));
                trace::configure("", 0);
                std::filesystem::remove(trace_file);
            },
        };
        for (int i = 0; i < 4; ++i) {
            arms[(round + i) % 4]();
        }
        ++round;
    }
    const auto paired = [&](const std::vector<double>& times) {
        std::vector<double> ratios;
        for (std::size_t i = 0; i < times.size(); ++i) {
            ratios.push_back(times[i] / t_off[i]);
        }
        return median(ratios);
    };
    state.counters["off"] = median(t_off) / unit;
    state.counters["on"] = median(t_on) / unit;
    state.counters["traced"] = median(t_trace) / unit;
    state.counters["on_vs_off"] = paired(t_on);
    state.counters["off_again_vs_off"] = paired(t_off_again);
    state.counters["traced_vs_off"] = paired(t_trace);
}

void BM_MetricsRepeatHit(benchmark::State& state) {
    const std::string& k = kernel_names().front();
    Context ctx = new_context();
    rounds(
        state,
        [&](Cache& cache) {
            Program first = request(cache, ctx.get(), k);  // built once per cache and context
            const auto start = Clock::now();
            for (int i = 0; i < kRepeats; ++i) {
                Program p = request(cache, ctx.get(), k);
                benchmark::DoNotOptimize(p.get());
            }
            return std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
                   kRepeats;
        },
        1.0);
}

void BM_MetricsStoreHit(benchmark::State& state) {
    const std::string& k = kernel_names().front();
    rounds(
        state,
        [&](Cache& cache) {
            double ns = 0;
            for (int i = 0; i < kStoreHits; ++i) {
                Context ctx = new_context();
                const auto start = Clock::now();
                Program p = request(cache, ctx.get(), k);
                ns += std::chrono::duration<double, std::nano>(Clock::now() - start).count();
                require_rung(p, Rung::user_store, "BM_MetricsStoreHit");
                p = Program();
                cache.forget(ctx.get());  // the context goes here, untimed
            }
            return ns / kStoreHits;
        },
        1e3);
}

}  // namespace

BENCHMARK(BM_MetricsRepeatHit)->Iterations(801)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MetricsStoreHit)->Iterations(201)->Unit(benchmark::kMillisecond);
