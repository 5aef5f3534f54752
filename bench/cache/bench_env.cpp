#include "bench_env.hpp"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "kcache/cl/program.hpp"
#include "kcache/kernels/launch.hpp"

namespace kcache::bench {
namespace {

using Clock = std::chrono::steady_clock;

const std::filesystem::path& temp_root() {
    static const std::filesystem::path root = [] {
        std::string pattern = (std::filesystem::temp_directory_path() / "kcache-bench-XXXXXX");
        if (::mkdtemp(pattern.data()) == nullptr) {
            die("mkdtemp failed");
        }
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(temp_root(), ec);
        });
        return std::filesystem::path(pattern);
    }();
    return root;
}

// Releases an OpenCL object of type T at scope exit.
template <class T, cl_int (*Release)(T)>
struct Owned {
    T handle = nullptr;
    ~Owned() {
        if (handle != nullptr) {
            Release(handle);
        }
    }
};

// The argument list of each kernel's first entry point: buffers zeroed, every
// shape 1, so one work-group runs the real code path on in-range data.
void set_args(cl_context context, cl_kernel k, const std::string& kernel,
              std::vector<Owned<cl_mem, clReleaseMemObject>>& buffers) {
    auto buffer_arg = [&](cl_uint index) {
        std::vector<std::uint8_t> zeros(4096, 0);
        cl_int err = CL_SUCCESS;
        cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, zeros.size(),
                                  zeros.data(), &err);
        if (err != CL_SUCCESS) {
            die("clCreateBuffer failed");
        }
        buffers.emplace_back().handle = m;
        clSetKernelArg(k, index, sizeof(m), &m);
    };
    auto int4_arg = [&](cl_uint index, const kernels::Int4& v) {
        clSetKernelArg(k, index, sizeof(v), v.data());
    };
    const cl_int one = 1, zero = 0;
    if (kernel == "dot") {  // dot_partial(x, y, n, partial)
        buffer_arg(0);
        buffer_arg(1);
        clSetKernelArg(k, 2, sizeof(cl_uint), &one);
        buffer_arg(3);
    } else if (kernel == "conv2d") {  // conv2d_direct(x, w, bias, y, in, filter, step, dil_out, b)
        for (cl_uint i = 0; i < 4; ++i) {
            buffer_arg(i);
        }
        auto shape = kernels::conv2d_shape_args(kernels::Conv2dShape{});
        for (cl_uint i = 0; i < 4; ++i) {
            int4_arg(4 + i, shape[i]);
        }
        clSetKernelArg(k, 8, sizeof(cl_int), &zero);
    } else if (kernel == "batchnorm") {  // batchnorm_inference(x, mean, var, g, b, y, shape, eps)
        for (cl_uint i = 0; i < 6; ++i) {
            buffer_arg(i);
        }
        int4_arg(6, kernels::batchnorm_shape_arg(kernels::BatchnormShape{}));
        const float eps = 1e-5f;
        clSetKernelArg(k, 7, sizeof(eps), &eps);
    } else if (kernel == "qconv_pointwise") {  // (x, w, bias, scale, zp, y, shape, x_zp, has_bias)
        for (cl_uint i = 0; i < 6; ++i) {
            buffer_arg(i);
        }
        int4_arg(6, kernels::qconv_shape_arg(kernels::QconvShape{}));
        clSetKernelArg(k, 7, sizeof(cl_int), &zero);
        clSetKernelArg(k, 8, sizeof(cl_int), &zero);
    } else {
        die("no launch arguments for kernel " + kernel);
    }
}

}  // namespace

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "cache_bench: FATAL: %s\n", what.c_str());
    std::fflush(stderr);
    std::_Exit(3);
}

const std::vector<std::string>& kernel_names() {
    static const std::vector<std::string> names = {"dot", "conv2d", "batchnorm", "qconv_pointwise"};
    return names;
}

void use_private_dirs() {
    ::setenv("POCL_CACHE_DIR", fresh_dir("pocl").c_str(), 1);
    ::setenv("KCACHE_DIR", fresh_dir("kcache").c_str(), 1);
}

std::filesystem::path fresh_dir(const std::string& tag) {
    static std::mutex mu;
    static int serial = 0;
    std::lock_guard g(mu);
    auto dir = temp_root() / (tag + "-" + std::to_string(++serial));
    std::filesystem::create_directories(dir);
    return dir;
}

cl_device_id pocl_device() {
    static const cl_device_id device = [] {
        cl_platform_id platform = nullptr;
        cl_device_id d = nullptr;
        if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
            clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &d, nullptr) != CL_SUCCESS) {
            die("no OpenCL device (PoCL expected)");
        }
        return d;
    }();
    return device;
}

Context new_context() {
    cl_device_id d = pocl_device();
    cl_int err = CL_SUCCESS;
    Context c(clCreateContext(nullptr, 1, &d, nullptr, nullptr, &err));
    if (!c || err != CL_SUCCESS) {
        die("clCreateContext failed");
    }
    return c;
}

const kernels::Rendered& rendered(const std::string& kernel) {
    static std::mutex mu;
    static std::map<std::string, kernels::Rendered> done;
    std::lock_guard g(mu);
    if (auto it = done.find(kernel); it != done.end()) {
        return it->second;
    }
    auto variant = kernels::make_variant(kernel);
    if (!variant) {
        die("unknown kernel " + kernel);
    }
    auto r = kernels::render(*variant);
    if (!r) {
        die("cannot render " + kernel + ": " + r.error().message);
    }
    return done.emplace(kernel, std::move(*r)).first->second;
}

namespace {

// Opens a cache on `c`; aborts on failure.
std::unique_ptr<Cache> open_config(const Config& c) {
    Outcome o;
    auto cache = Cache::open(c, &o);
    if (!cache) {
        die("Cache::open failed: " + o.message);
    }
    return cache;
}

}  // namespace

Config cache_config(const std::filesystem::path& dir) {
    Config c;
    c.dir = dir;
    c.jit_helper = KCACHE_BENCH_JIT_PATH;
    c.jit_timeout = std::chrono::milliseconds(120'000);
    c.max_resident_bytes = 0;  // a new context reads the store (see context_bench.cpp)
    return c;
}

std::unique_ptr<Cache> open_cache(const std::filesystem::path& dir) {
    return open_config(cache_config(dir));
}

std::unique_ptr<Cache> open_resident_cache(const std::filesystem::path& dir) {
    Config c = cache_config(dir);
    c.max_resident_bytes = Config{}.max_resident_bytes;  // the default
    return open_config(c);
}

Program request(Cache& cache, cl_context context, const std::string& kernel) {
    KernelRequest q;
    q.kernel = kernel;
    return cache.program(context, pocl_device(), q);
}

void require_rung(const Program& p, Rung rung, const char* what) {
    const Outcome& o = p.outcome();
    if (!p.ok() || o.rung != rung) {
        die(std::string(what) + ": expected rung " + to_string(rung) + ", got " +
            to_string(o.rung) + " (status " + to_string(o.status) + ": " + o.message + ")");
    }
}

std::chrono::nanoseconds first_launch(cl_context context, cl_program program,
                                      const std::string& kernel) {
    const auto& r = rendered(kernel);
    cl_int err = CL_SUCCESS;
    Owned<cl_command_queue, clReleaseCommandQueue> queue{
        clCreateCommandQueueWithProperties(context, pocl_device(), nullptr, &err)};
    if (err != CL_SUCCESS) {
        die("clCreateCommandQueueWithProperties failed");
    }
    std::vector<Owned<cl_mem, clReleaseMemObject>> buffers;
    buffers.reserve(8);
    const std::size_t local = r.local_size == 0 ? 1 : r.local_size;
    const auto start = Clock::now();
    Owned<cl_kernel, clReleaseKernel> k{
        clCreateKernel(program, r.entry_points.front().c_str(), &err)};
    if (err != CL_SUCCESS) {
        die("clCreateKernel(" + r.entry_points.front() + ") failed: " + std::to_string(err));
    }
    set_args(context, k.handle, kernel, buffers);
    err = clEnqueueNDRangeKernel(queue.handle, k.handle, 1, nullptr, &local, &local, 0, nullptr,
                                 nullptr);
    if (err == CL_SUCCESS) {
        err = clFinish(queue.handle);
    }
    const auto took = Clock::now() - start;
    if (err != CL_SUCCESS) {
        die("first launch of " + kernel + " failed: " + std::to_string(err));
    }
    return took;
}

ProgramHandle program_from_bytes(cl_context context, const std::vector<std::uint8_t>& bytes,
                                 const std::string& options) {
    auto p = cl::program_from_binary(context, pocl_device(), bytes, options);
    if (!p) {
        die("the driver floor failed to load the stored binary: " + p.error().message);
    }
    return std::move(*p);
}

std::string run_child(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    std::string command = "env";
    for (const auto& e : env) {
        command += " '" + e + "'";
    }
    command += " /proc/" + std::to_string(::getpid()) + "/exe";
    for (const auto& a : args) {
        command += " '" + a + "'";
    }
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) {
        die("popen failed: " + command);
    }
    std::string out;
    std::array<char, 512> buf{};
    while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) {
        out += buf.data();
    }
    const int status = ::pclose(pipe);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        die("child failed (" + std::to_string(status) + "): " + command);
    }
    return out;
}

}  // namespace kcache::bench
