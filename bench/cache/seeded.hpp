#pragma once
// The state the benchmarks share: a user store seeded (by the helper JIT) with
// every kernel, the exact bytes it holds, and the key inputs of each kernel.

#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bench_env.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/service/keys.hpp"

namespace kcache::bench {

// The kernel a benchmark runs: its argument indexes kernel_names().
inline const std::string& kernel_of(const benchmark::State& state) {
    return kernel_names().at(static_cast<std::size_t>(state.range(0)));
}

// Registers one argument per kernel of kernel_names().
inline void per_kernel(benchmark::internal::Benchmark* b) {
    for (std::size_t i = 0; i < kernel_names().size(); ++i) {
        b->Arg(static_cast<int64_t>(i));
    }
}

// What the service hashes for `kernel`'s default variant.
device_db::CompileInput input_of(const std::string& kernel);

// The probed identity of pocl_device(); aborts when probing fails.
const device_db::DeviceIdentity& identity();

// A user store holding every kernel (built once by the helper JIT), and the
// exact stored bytes of each, read back through the store.
struct Seeded {
    std::filesystem::path dir;
    std::map<std::string, std::vector<std::uint8_t>> bytes;
};

// Seeds on first use; aborts when a step fails.
const Seeded& seeded();

}  // namespace kcache::bench
