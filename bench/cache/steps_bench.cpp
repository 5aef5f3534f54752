// Where a store hit's time goes: each step of Cache::program on the store
// rung, timed alone (see README.md here).

#include <benchmark/benchmark.h>

#include "kcache/device_db/database.hpp"
#include "kcache/store/codec.hpp"
#include "kcache/store/store.hpp"
#include "seeded.hpp"

namespace {

using namespace kcache;
using namespace kcache::bench;

void BM_StepRender(benchmark::State& state) {
    const auto& k = kernel_of(state);
    for (auto _ : state) {
        auto v = kernels::make_variant(k);
        auto r = kernels::render(*v);
        benchmark::DoNotOptimize(r->source.data());
    }
}

void BM_StepDeviceChecks(benchmark::State& state) {
    auto db = device_db::DeviceDb::builtin();
    if (!db) {
        die("device database: " + db.error().message);
    }
    Context ctx = new_context();
    for (auto _ : state) {  // device_in_context, quirks_for, aot_target: what prepare() runs
        cl_uint n = 0;
        clGetContextInfo(ctx.get(), CL_CONTEXT_NUM_DEVICES, sizeof(n), &n, nullptr);
        std::vector<cl_device_id> devices(n);
        clGetContextInfo(ctx.get(), CL_CONTEXT_DEVICES, n * sizeof(cl_device_id), devices.data(),
                         nullptr);
        auto q = db->quirks_for(identity());
        auto target = service::aot_target(*db, identity());
        benchmark::DoNotOptimize(q.deny);
        benchmark::DoNotOptimize(target.has_value());
    }
}

void BM_StepProbe(benchmark::State& state) {
    for (auto _ : state) {
        auto p = device_db::probe(pocl_device());
        benchmark::DoNotOptimize(p.ok());
    }
}

void BM_StepSourceDigest(benchmark::State& state) {
    const auto& source = rendered(kernel_of(state)).source;
    for (auto _ : state) {
        auto digest = kcache::sha256_hex(source);
        benchmark::DoNotOptimize(digest.data());
    }
    state.counters["source_KB"] = static_cast<double>(source.size()) / 1024.0;
}

void BM_StepKey(benchmark::State& state) {
    const auto input = input_of(kernel_of(state));
    for (auto _ : state) {
        auto key = store::make_key(device_db::jit_key_fields(identity(), input));
        benchmark::DoNotOptimize(key);
    }
}

void BM_StepStoreGet(benchmark::State& state) {
    const auto fields = device_db::jit_key_fields(identity(), input_of(kernel_of(state)));
    auto store = store::Store::open(seeded().dir);
    if (!store) {
        die("cannot open the seeded store: " + store.error().message);
    }
    for (auto _ : state) {
        auto e = store->get(fields);
        if (!e) {
            die("store get missed");
        }
        benchmark::DoNotOptimize(e->bytes.data());
    }
}

void BM_StepZstdDecodeVerify(benchmark::State& state) {
    const auto& raw = seeded().bytes.at(kernel_of(state));
    const auto encoded =
        store::encode(raw, store::Policy{}.zstd_level, store::Policy{}.zstd_compress_literals);
    const auto sum = store::checksum_of(raw);
    for (auto _ : state) {
        auto out = store::decode_verified(encoded.codec, encoded.data, raw.size(), sum);
        benchmark::DoNotOptimize(out->data());
    }
    state.counters["stored_KB"] = static_cast<double>(encoded.data.size()) / 1024.0;
}

void BM_StepChecksum(benchmark::State& state) {
    const auto& raw = seeded().bytes.at(kernel_of(state));
    for (auto _ : state) {
        auto sum = store::checksum_of(raw);
        benchmark::DoNotOptimize(sum);
    }
}

BENCHMARK(BM_StepRender)->Apply(per_kernel)->Repetitions(3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_StepDeviceChecks)->Arg(0)->Repetitions(3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_StepProbe)->Arg(0)->Repetitions(3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_StepSourceDigest)->Apply(per_kernel)->Repetitions(3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_StepKey)->Apply(per_kernel)->Repetitions(3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_StepStoreGet)->Apply(per_kernel)->Repetitions(3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_StepZstdDecodeVerify)
    ->Apply(per_kernel)
    ->Repetitions(3)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_StepChecksum)->Apply(per_kernel)->Repetitions(3)->Unit(benchmark::kMicrosecond);

}  // namespace
