// Cost of turning a variant id into the text, options and entry points the
// cache key hashes. Baseline: copying the same number of source bytes, the
// least any render must do.

#include <benchmark/benchmark.h>

#include "kcache/kernels/registry.hpp"

namespace {

using namespace kcache::kernels;

constexpr const char* kId = "qconv2d_pointwise:out=i8,act=relu";

void BM_copy_source_baseline(benchmark::State& state) {
    const std::string text = render(*parse_variant(kId))->source;
    for (auto _ : state) {
        std::string copy = text;
        benchmark::DoNotOptimize(copy.data());
    }
}
BENCHMARK(BM_copy_source_baseline);

void BM_parse_variant(benchmark::State& state) {
    for (auto _ : state)
        benchmark::DoNotOptimize(parse_variant(kId));
}
BENCHMARK(BM_parse_variant);

void BM_parse_and_render(benchmark::State& state) {
    for (auto _ : state)
        benchmark::DoNotOptimize(render(*parse_variant(kId)));
}
BENCHMARK(BM_parse_and_render);

void BM_render_all_variants(benchmark::State& state) {
    for (auto _ : state) {
        for (const Variant& v : all_variants())
            benchmark::DoNotOptimize(render(v));
    }
}
BENCHMARK(BM_render_all_variants);

}  // namespace

BENCHMARK_MAIN();
