#pragma once
// What the long-lived process's sections share (hit_bench.cpp, hit_parts.cpp):
// contexts made per sample, the registry kernels' requests and stored bytes,
// the driver floor, and the rotation of arms.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu_common.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/service/keys.hpp"

namespace gpu_bench {

using Bytes = std::vector<std::uint8_t>;

constexpr int kSamples = 40;

double us_since(Clock::time_point t0);

// A context owned by this scope. With GPU_BENCH_EVICT_MB=N, N MiB are
// written after the context is made: on a CPU device this imitates what a
// GPU context's creation leaves in the CPU's caches (all of them cold).
struct Ctx {
    cl_context c = nullptr;
    explicit Ctx(const Device& d);
    ~Ctx();
    Ctx(const Ctx&) = delete;
    Ctx& operator=(const Ctx&) = delete;
};

// `kernel`'s default variant, rendered.
kcache::kernels::Rendered rendered(const std::string& kernel);
kcache::device_db::CompileInput input_of(const std::string& kernel);
// A Cache on the store in `dir`; `resident` false turns the resident bytes off.
std::unique_ptr<kcache::Cache> open_at(const std::filesystem::path& dir, bool resident);
kcache::KernelRequest request_of(const std::string& kernel);

// The floor on `ctx`: create + build; returns µs (negative on failure), and
// the create call's share in `create_us` when given.
double floor_us(const Device& d, cl_context ctx, const Bytes& bytes, const std::string& options,
                double* create_us = nullptr);

// The floor as an application that keeps its own binaries in files pays
// it: `file` read with one read() into a buffer of its size, then loaded;
// returns µs for both (negative on failure), the load's share in `load_us`
// when given.
double read_floor_us(const Device& d, cl_context ctx, const std::filesystem::path& file,
                     const std::string& options, double* load_us = nullptr);

// The stored bytes of `kernel` on `d` (JIT-built into `dir` first when needed).
Bytes stored_bytes(const Device& d, const std::filesystem::path& dir, const std::string& kernel);

// `bytes` written to `dir`/`kernel`.bin, for the floor's fresh process (its path).
std::filesystem::path bytes_file(const std::filesystem::path& dir, const std::string& kernel,
                                 const Bytes& bytes);

// This executable's path; runs it with `args` and returns the first number
// it printed (µs), or -1; a second number, when printed, goes to `part`,
// and a third to `third`.
std::string self_path();
double child_us(const std::string& args, double* part = nullptr, double* third = nullptr);

// kSamples rounds of `n` arms, each round starting one arm later than the last.
void rotate(const std::function<void()>* arms, int n);

// Section 1b (hit_parts.cpp): a resident hit split along its driver calls.
void hit_parts(const Device& d, const std::filesystem::path& dir);

// Section 3b (hit_steps.cpp): a fresh process's first hit split into its steps.
void first_hit_steps(const Device& d, const std::filesystem::path& dir);

// Sections 4 (`memory`) and 5 (`time`) (hit_loops.cpp): a caller's loop of
// context, request and release.
void loops(const Device& d, const std::filesystem::path& dir, bool memory, bool time);

}  // namespace gpu_bench
