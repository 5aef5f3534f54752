#include "jit_support.hpp"
#include "test_platform.hpp"

#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include "temp_path.hpp"

#include "kcache/cl/handles.hpp"
#include "kcache/cl/program.hpp"

namespace kcache::test {

namespace {
std::filesystem::path& private_cache() {
    static std::filesystem::path dir;
    return dir;
}
}  // namespace

void use_private_pocl_cache() {
    if (!private_cache().empty()) {
        return;
    }
    private_cache() = make_temp_dir("pocl-cache");
    ::setenv("POCL_CACHE_DIR", private_cache().c_str(), 1);
    std::atexit([] {
        std::error_code ec;
        std::filesystem::remove_all(private_cache(), ec);
    });
}

compiler::DeviceSelector pocl_device() {
    compiler::DeviceSelector d;
    // The selector matches names exactly: resolve the test platform's full name.
    d.platform_name = test_platform_name();
    if (cl_platform_id platform = find_test_platform()) {
        char name[256] = {};
        clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
        d.platform_name = name;
    }
    return d;
}

compiler::JitCompiler pocl_jit(const std::string& cache_dir) {
    compiler::JitConfig config;
    config.helper_path = jit_helper_path();
    config.env_overrides = {"POCL_CACHE_DIR=" + cache_dir};
    return compiler::JitCompiler(config);
}

std::string axpb_source(int salt) {
    return "__kernel void axpb(__global const float* a, __global const float* b,\n"
           "                   __global float* c) {\n"
           "    size_t i = get_global_id(0);\n"
           "    c[i] = a[i] * 2.0f + b[i] + " +
           std::to_string(salt) + ".0f;\n}\n";
}

std::string nested_macro_kernel(int levels) {
    std::string s = "#define L0(x) x = x * 1.0001f + 0.5f;\n";
    for (int i = 1; i <= levels; ++i) {
        s += "#define L" + std::to_string(i) + "(x) L" + std::to_string(i - 1) + "(x) L" +
             std::to_string(i - 1) + "(x)\n";
    }
    s += "__kernel void slow(__global float* a) {\n    float x = a[get_global_id(0)];\n    L" +
         std::to_string(levels) + "(x)\n    a[get_global_id(0)] = x;\n}\n";
    return s;
}

compiler::JitRequest axpb_request(int salt) {
    compiler::JitRequest q;
    q.device = pocl_device();
    q.source = axpb_source(salt);
    q.entry_points = {"axpb"};
    return q;
}

compiler::JitRequest slow_request() {
    compiler::JitRequest q;
    q.device = pocl_device();
    q.source = nested_macro_kernel(17);
    q.entry_points = {"slow"};
    return q;
}

compiler::JitRequest deep_expression_request(std::uint64_t stack_bytes) {
    std::string sum = "x";
    for (int i = 0; i < 6000; ++i) {
        sum += " + x";
    }
    compiler::JitRequest q;
    q.device = pocl_device();
    q.source = "__kernel void deep(__global float* a) { float x = a[0]; a[1] = " + sum + "; }";
    q.entry_points = {"deep"};
    q.build_stack_bytes = stack_bytes;
    return q;
}

float run_axpb_binary(const std::string& binary, int n, int local, LaunchTimes* times,
                      std::string* failed) {
    // One at a time: PoCL 3.1 failed a 256-byte clCreateBuffer with
    // CL_INVALID_BUFFER_SIZE in 3 of 8 runs of six threads each creating and
    // releasing a context here at once (never with the calls serialized).
    static std::mutex one_at_a_time;
    std::lock_guard serialized(one_at_a_time);
    const float nan = std::nanf("");
    // Names the first call that failed, with its OpenCL error code.
    auto fail = [&](const char* call, cl_int code) {
        if (failed) {
            *failed = cl::failure(call, code);
        }
        return nan;
    };
    cl_platform_id platform = nullptr;
    cl_device_id dev = nullptr;
    cl_int e = clGetPlatformIDs(1, &platform, nullptr);
    if (e != CL_SUCCESS) {
        return fail("clGetPlatformIDs", e);
    }
    if ((e = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr)) != CL_SUCCESS) {
        return fail("clGetDeviceIDs", e);
    }
    cl::ContextHandle ctx(clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &e));
    if (!ctx) {
        return fail("clCreateContext", e);
    }
    cl::QueueHandle queue(clCreateCommandQueueWithProperties(ctx.get(), dev, nullptr, &e));
    if (!queue) {
        return fail("clCreateCommandQueueWithProperties", e);
    }
    const std::vector<std::uint8_t> bytes(binary.begin(), binary.end());
    auto program = cl::program_from_binary(ctx.get(), dev, bytes, "");
    if (!program) {
        if (failed) {
            *failed = "loading the binary failed: " + program.error().message;
        }
        return nan;
    }
    cl::KernelHandle kernel(clCreateKernel(program->get(), "axpb", &e));
    if (!kernel) {
        return fail("clCreateKernel", e);
    }
    std::vector<float> a(n, 1.0f), b(n, 3.0f), c(n, 0.0f);
    const auto flags = CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR;
    cl::MemHandle bufs[3];
    float* hosts[3] = {a.data(), b.data(), c.data()};
    for (cl_uint i = 0; i < 3; ++i) {
        bufs[i] = cl::MemHandle(clCreateBuffer(ctx.get(), flags, n * sizeof(float), hosts[i], &e));
        if (!bufs[i]) {
            return fail("clCreateBuffer", e);
        }
        cl_mem m = bufs[i].get();
        if ((e = clSetKernelArg(kernel.get(), i, sizeof(cl_mem), &m)) != CL_SUCCESS) {
            return fail("clSetKernelArg", e);
        }
    }
    const std::size_t global = static_cast<std::size_t>(n);
    const std::size_t local_size = static_cast<std::size_t>(local);
    double ms[2] = {0, 0};
    for (double& t : ms) {
        const auto start = std::chrono::steady_clock::now();
        if ((e = clEnqueueNDRangeKernel(queue.get(), kernel.get(), 1, nullptr, &global, &local_size,
                                        0, nullptr, nullptr)) != CL_SUCCESS) {
            return fail("clEnqueueNDRangeKernel", e);
        }
        if ((e = clFinish(queue.get())) != CL_SUCCESS) {
            return fail("clFinish", e);
        }
        t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
    }
    if (times) {
        *times = LaunchTimes{ms[0], ms[1]};
    }
    if ((e = clEnqueueReadBuffer(queue.get(), bufs[2].get(), CL_TRUE, 0, n * sizeof(float),
                                 c.data(), 0, nullptr, nullptr)) != CL_SUCCESS) {
        return fail("clEnqueueReadBuffer", e);
    }
    return c[n - 1];
}

}  // namespace kcache::test
