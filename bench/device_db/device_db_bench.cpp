// Cost of building the device database at startup, and of the per-device lookups.
// Baseline: nlohmann's plain DOM parse of the same devices.json (no lines, no checks).
#include <benchmark/benchmark.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kcache/device_db/database.hpp"
#include "kcache/device_db/loader.hpp"

namespace {

using namespace kcache::device_db;

std::string devices_text() {
    std::ifstream in(KCACHE_DEVICES_JSON);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void BM_PlainJsonParse(benchmark::State& state) {
    const std::string text = devices_text();
    for (auto _ : state) {
        benchmark::DoNotOptimize(nlohmann::json::parse(text));
    }
}
BENCHMARK(BM_PlainJsonParse);

void BM_ParseDataFile(benchmark::State& state) {
    const std::string text = devices_text();
    for (auto _ : state) {
        auto file = parse_data_file(text, "devices.json");
        if (!file) {
            state.SkipWithError(file.error().message.c_str());
            return;
        }
        benchmark::DoNotOptimize(file);
    }
}
BENCHMARK(BM_ParseDataFile);

void BM_BuiltinDb(benchmark::State& state) {
    for (auto _ : state) {
        auto db = DeviceDb::builtin();
        benchmark::DoNotOptimize(db);
    }
}
BENCHMARK(BM_BuiltinDb);

DeviceIdentity arc_a770() {
    DeviceIdentity id;
    id.vendor_id = 0x8086;
    id.type = DeviceType::gpu;
    id.pci_device_id = 0x56a0;
    id.driver_version = "24.9.28717.12";
    return id;
}

void BM_MatchAndQuirks(benchmark::State& state) {
    auto db = DeviceDb::builtin();
    const DeviceIdentity id = arc_a770();
    for (auto _ : state) {
        benchmark::DoNotOptimize(db->match(id));
        benchmark::DoNotOptimize(db->quirks_for(id));
    }
}
BENCHMARK(BM_MatchAndQuirks);

}  // namespace

BENCHMARK_MAIN();
