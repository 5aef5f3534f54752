// main(): the benchmarks, or one of the child modes that the second-process
// benchmarks run (this executable again, with a fresh process state).

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "bench_env.hpp"

namespace {

using namespace kcache;
using namespace kcache::bench;
using Clock = std::chrono::steady_clock;

// Reads a whole file.
std::vector<std::uint8_t> read_bytes(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// --child=pocl-build KERNEL: PoCL source build, twice, with whatever cache the
// environment gives. Prints both times in microseconds.
int child_pocl_build(const std::string& k) {
    const auto& r = rendered(k);
    Context ctx = new_context();
    cl_device_id d = pocl_device();
    double us[2] = {0, 0};
    for (double& t : us) {
        const char* src = r.source.c_str();
        cl_int err = CL_SUCCESS;
        const auto start = Clock::now();
        ProgramHandle p(clCreateProgramWithSource(ctx.get(), 1, &src, nullptr, &err));
        if (err != CL_SUCCESS ||
            clBuildProgram(p.get(), 1, &d, r.options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
            die("PoCL source build of " + k + " failed");
        }
        t = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    }
    std::printf("%.1f %.1f\n", us[0], us[1]);
    return 0;
}

// --child=floor KERNEL FILE: the driver floor on FILE's bytes, twice.
int child_floor(const std::string& k, const std::string& file) {
    const auto bytes = read_bytes(file);
    double us[2] = {0, 0};
    for (double& t : us) {
        Context ctx = new_context();
        const auto start = Clock::now();
        ProgramHandle p = program_from_bytes(ctx.get(), bytes, rendered(k).options);
        t = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    }
    std::printf("%.1f %.1f\n", us[0], us[1]);
    return 0;
}

// --child=kcache-hit KERNEL STORE [OTHER FILE]: the first Cache::program of this
// process (must be a user-store hit), then a second in a new context. With
// OTHER and FILE, PoCL first loads kernel OTHER's binary from FILE (untimed).
int child_kcache_hit(const std::string& k, const std::string& dir, const char* other,
                     const char* file) {
    if (other != nullptr && file != nullptr) {
        Context warm = new_context();
        program_from_bytes(warm.get(), read_bytes(file), rendered(other).options);
    }
    auto cache = open_cache(dir);
    double us[2] = {0, 0};
    for (double& t : us) {
        Context ctx = new_context();
        const auto start = Clock::now();
        Program p = request(*cache, ctx.get(), k);
        t = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
        require_rung(p, Rung::user_store, "kcache-hit child");
    }
    std::printf("%.1f %.1f\n", us[0], us[1]);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 3 && std::strcmp(argv[1], "--child=pocl-build") == 0) {
        return child_pocl_build(argv[2]);
    }
    if (argc >= 4 && std::strcmp(argv[1], "--child=floor") == 0) {
        return child_floor(argv[2], argv[3]);
    }
    if (argc >= 4 && std::strcmp(argv[1], "--child=kcache-hit") == 0) {
        return child_kcache_hit(argv[2], argv[3], argc >= 6 ? argv[4] : nullptr,
                                argc >= 6 ? argv[5] : nullptr);
    }
    use_private_dirs();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
