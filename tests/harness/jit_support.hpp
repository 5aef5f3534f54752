#pragma once
// Shared pieces of the JIT tests and benchmarks: where kcache-jit is, PoCL
// requests, the slow kernel, and loading a binary back into this process.

#include <cstdlib>
#include <string>

#include "kcache/compiler/jit.hpp"

namespace kcache::test {

// The path baked in by tests/harness/CMakeLists.txt; KCACHE_TEST_JIT_PATH in
// the environment overrides it (test binaries run from another tree).
inline const char* jit_helper_path() {
    const char* env = std::getenv("KCACHE_TEST_JIT_PATH");
    return env && *env ? env : KCACHE_TEST_JIT_PATH;
}

// Selects PoCL's CPU device by platform name.
compiler::DeviceSelector pocl_device();

// A JitCompiler for kcache-jit whose PoCL kernel cache lives in `cache_dir`.
compiler::JitCompiler pocl_jit(const std::string& cache_dir);

// `c[i] = a[i] * 2 + b[i] + salt` as kernel "axpb"; `salt` makes each
// source distinct so no PoCL cache can serve it.
std::string axpb_source(int salt);

// A legal kernel whose PoCL build takes minutes: 2^levels statements from
// nested macro expansion.
std::string nested_macro_kernel(int levels);

// A request for axpb_source(`salt`), kernel "axpb", on pocl_device().
compiler::JitRequest axpb_request(int salt);

// A request for nested_macro_kernel(17), kernel "slow", on pocl_device():
// minutes to build on PoCL (well over 30 s, over 2 min measured).
compiler::JitRequest slow_request();

// A legal kernel "deep" whose build recurses deeply (a sum of 6000 terms):
// it overflows a 1 MiB build stack (SIGSEGV, a real crash of the driver's
// compiler) and builds on the default one.
compiler::JitRequest deep_expression_request(std::uint64_t stack_bytes);

// Times of the first and second enqueue+finish of a freshly loaded kernel.
struct LaunchTimes {
    double first_ms = 0;
    double second_ms = 0;
};

// Loads `binary` into this process (PoCL), runs "axpb" twice over `n` items
// with local size `local` and returns c[n-1], or NaN on any OpenCL failure;
// `times` (optional) receives both launch times and `failed` (optional) the
// call that failed and its error code. Calls from several threads run one
// at a time.
float run_axpb_binary(const std::string& binary, int n, int local, LaunchTimes* times,
                      std::string* failed = nullptr);

}  // namespace kcache::test

namespace kcache::test {

// Points this process's own PoCL kernel cache at a fresh directory (once per
// process; removed at exit). Call before the first OpenCL call.
void use_private_pocl_cache();

}  // namespace kcache::test
