#pragma once
// The PoCL device, private temporary directories, the registry kernels under
// test, a first launch of each, and child processes of this executable (see
// README.md here for what each benchmark measures).

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kcache/cl/handles.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/service/service_api.hpp"

namespace kcache::bench {

// The owners of contexts and programs (kcache/cl/handles.hpp).
using Context = cl::ContextHandle;
using ProgramHandle = cl::ProgramHandle;

// The kernels the issue names, each in its default variant.
const std::vector<std::string>& kernel_names();

// Points this process's PoCL cache and KCACHE_DIR at fresh temporary
// directories (removed at exit). Call before the first OpenCL call.
void use_private_dirs();

// Returns a new empty directory under this process's temporary root.
std::filesystem::path fresh_dir(const std::string& tag);

// The first PoCL device (the only OpenCL device here); aborts when none.
cl_device_id pocl_device();

// A new context on pocl_device(); aborts on failure.
Context new_context();

// The default variant of `kernel` rendered by the registry; aborts on failure.
const kernels::Rendered& rendered(const std::string& kernel);

// A cache config for a store in `dir` with kcache-jit from the build tree and
// no resident bytes, so that a new context's request reads the store.
Config cache_config(const std::filesystem::path& dir);

// Opens a cache on `dir`; aborts on failure.
std::unique_ptr<Cache> open_cache(const std::filesystem::path& dir);

// Opens a cache on `dir` that keeps decoded bytes in memory (the default
// bound), so a new context's request reads no store; aborts on failure.
std::unique_ptr<Cache> open_resident_cache(const std::filesystem::path& dir);

// Asks `cache` for `kernel` (default variant, blocking).
Program request(Cache& cache, cl_context context, const std::string& kernel);

// Aborts with `what` and the outcome unless `p` is ok and came from `rung`.
void require_rung(const Program& p, Rung rung, const char* what);

// Creates the first entry point of `kernel`'s program, sets small arguments
// (every shape 1, zeroed buffers) and runs one work-group to completion.
// Returns the wall time of that first launch (kernel creation included).
std::chrono::nanoseconds first_launch(cl_context context, cl_program program,
                                      const std::string& kernel);

// clCreateProgramWithBinary + clBuildProgram of `bytes` with `options`
// (cl::program_from_binary, the loader the lookup ladder uses).
ProgramHandle program_from_bytes(cl_context context, const std::vector<std::uint8_t>& bytes,
                                 const std::string& options);

// Runs this executable as `args` with `env` ("NAME=value") added; returns its
// stdout. Aborts when it fails.
std::string run_child(const std::vector<std::string>& args, const std::vector<std::string>& env);

// Seconds in `d`, for SetIterationTime.
inline double seconds(std::chrono::nanoseconds d) {
    return std::chrono::duration<double>(d).count();
}

[[noreturn]] void die(const std::string& what);

}  // namespace kcache::bench
