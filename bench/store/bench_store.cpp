// Store benchmarks: get of a 100 KiB entry (lookup + decompress + checksum),
// a miss, and sustained puts; baselines side by side: decoding the same
// frame from memory, and reading the raw bytes from a plain file.
//
// Payload: a 100 KiB slice of this executable's own file (x86-64 machine
// code, symbol and debug tables): real binary bytes that zstd -3 shrinks
// about 2-3x, like a device binary.

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "kcache/store/codec.hpp"
#include "kcache/store/store.hpp"
#include "store_samples.hpp"
#include "temp_path.hpp"

namespace ks = kcache::store;
namespace fs = std::filesystem;
using kcache::test::sample_fields;
using kcache::test::test_provenance;

namespace {

constexpr std::size_t kEntryBytes = 100 * 1024;

const ks::Bytes& executable_bytes() {
    static const ks::Bytes all = [] {
        std::ifstream in("/proc/self/exe", std::ios::binary);
        return ks::Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }();
    return all;
}

ks::Bytes payload(std::size_t n, std::size_t offset) {
    const ks::Bytes& all = executable_bytes();
    if (all.size() < n + 64 * 1024) {
        throw std::runtime_error("executable too small for the payload");
    }
    offset %= all.size() - n;
    return ks::Bytes(all.begin() + static_cast<std::ptrdiff_t>(offset),
                     all.begin() + static_cast<std::ptrdiff_t>(offset + n));
}

// A store in a fresh temporary directory, removed afterwards.
struct TempStore {
    fs::path dir;
    std::optional<ks::Store> store;

    explicit TempStore(ks::Policy policy = {}) {
        dir = kcache::test::make_temp_dir("bench-store");
        auto s = ks::Store::open(dir / "cache", std::move(policy));
        if (!s.ok()) {
            throw std::runtime_error(s.error().message);
        }
        store.emplace(std::move(s).value());
    }
    ~TempStore() {
        store.reset();
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};

void set_ratio(benchmark::State& state, const ks::Bytes& raw) {
    state.counters["zstd_ratio"] =
        static_cast<double>(raw.size()) / static_cast<double>(ks::encode(raw, 3).data.size());
}

// A populated store: the entry the get benchmarks read (sample_fields(-1)), with
// 50 other entries around it; returns its bytes.
ks::Bytes populate(TempStore& t) {
    const ks::Bytes raw = payload(kEntryBytes, 512 * 1024);
    for (int i = 0; i < 50; ++i) {
        (void)t.store->put(sample_fields(i), payload(kEntryBytes, 4096 * i), test_provenance());
    }
    (void)t.store->put(sample_fields(-1), raw, test_provenance());
    return raw;
}

void BM_StoreGetHit100KiB(benchmark::State& state) {
    TempStore t;
    const ks::Bytes raw = populate(t);
    for (auto _ : state) {
        auto got = t.store->get(sample_fields(-1));
        if (!got.ok() || got->bytes.size() != raw.size()) {
            state.SkipWithError("get failed");
            break;
        }
        benchmark::DoNotOptimize(got->bytes.data());
    }
    set_ratio(state, raw);
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * raw.size()));
}
BENCHMARK(BM_StoreGetHit100KiB)->Unit(benchmark::kMicrosecond);

// The same entry from its hot copy (Store::get_hot: a file read, key record
// and checksum verified, no SQLite), beside the hit above.
void BM_StoreGetHot100KiB(benchmark::State& state) {
    TempStore t;
    const ks::Bytes raw = populate(t);
    for (auto _ : state) {
        auto got = t.store->get_hot(sample_fields(-1));
        if (!got || got->size() != raw.size()) {
            state.SkipWithError("get_hot failed");
            break;
        }
        benchmark::DoNotOptimize(got->data());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * raw.size()));
}
BENCHMARK(BM_StoreGetHot100KiB)->Unit(benchmark::kMicrosecond);

void BM_StoreGetMiss(benchmark::State& state) {
    TempStore t;
    for (int i = 0; i < 50; ++i) {
        (void)t.store->put(sample_fields(i), payload(kEntryBytes, 4096 * i), test_provenance());
    }
    const ks::KeyFields absent = sample_fields(1'000'000);
    for (auto _ : state) {
        auto got = t.store->get(absent);
        benchmark::DoNotOptimize(got.ok());
    }
}
BENCHMARK(BM_StoreGetMiss)->Unit(benchmark::kMicrosecond);

// Puts of distinct 100 KiB entries, one commit each, into a store bounded at
// 64 MiB so that eviction runs in the steady state too; with hot copies
// (hot:1, the default, also bounded at 64 MiB) and without (hot:0).
void BM_StorePut100KiB(benchmark::State& state) {
    ks::Policy policy;
    policy.max_bytes = 64ull << 20;
    policy.max_hot_bytes = state.range(0) != 0 ? 64ull << 20 : 0;
    TempStore t(policy);
    std::vector<ks::Bytes> payloads;
    for (int i = 0; i < 16; ++i) {
        payloads.push_back(payload(kEntryBytes, 8192 * i));
    }
    int i = 0;
    for (auto _ : state) {
        auto put = t.store->put(sample_fields(i), payloads[i % payloads.size()], test_provenance());
        if (!put.ok()) {
            state.SkipWithError(put.error().message.c_str());
            break;
        }
        ++i;
    }
    state.SetItemsProcessed(state.iterations());
}
// Real (wall) time: "sustained per second" includes waiting for the disk.
BENCHMARK(BM_StorePut100KiB)
    ->ArgName("hot")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(2.0)
    ->UseRealTime();

// Baseline: only decompress + checksum of the same frame, from memory.
void BM_BaselineDecodeVerify100KiB(benchmark::State& state) {
    const ks::Bytes raw = payload(kEntryBytes, 512 * 1024);
    const ks::Encoded enc = ks::encode(raw, 3);
    const ks::Checksum sum = ks::checksum_of(raw);
    for (auto _ : state) {
        auto out = ks::decode_verified(enc.codec, enc.data, raw.size(), sum);
        benchmark::DoNotOptimize(out.ok());
    }
}
BENCHMARK(BM_BaselineDecodeVerify100KiB)->Unit(benchmark::kMicrosecond);

// Baseline: open + read + close of a plain 100 KiB file (no checks at all).
void BM_BaselineFileRead100KiB(benchmark::State& state) {
    TempStore t;
    const ks::Bytes raw = payload(kEntryBytes, 512 * 1024);
    const fs::path file = t.dir / "plain.bin";
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
    ks::Bytes buf(raw.size());
    for (auto _ : state) {
        int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
        benchmark::DoNotOptimize(::read(fd, buf.data(), buf.size()));
        ::close(fd);
    }
}
BENCHMARK(BM_BaselineFileRead100KiB)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
