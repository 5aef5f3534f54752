// layer_probe: an ordinary OpenCL application (no kcache code) that the layer
// tests run with and without the layer. `entry` prints one `name=value` line
// per answer of every program and kernel entry point the layer handles, for
// the test to compare; `slow` builds a kernel whose compile takes minutes and
// prints the status, the milliseconds and the build log (`slow-compile`
// compiles it with clCompileProgram); `il` and `il-run FILE` create
// programs from IL (layer_probe_il.cpp); `context`, `exit`
// and `fork` create a context and then build nothing, exit from another
// thread, or fork before building.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "jit_support.hpp"
#include "layer_probe.hpp"

namespace probe {

cl_context g_context = nullptr;
cl_command_queue g_queue = nullptr;
std::vector<cl_device_id> g_devices;

void put(const std::string& name, const std::string& value) {
    std::printf("%s=%s\n", name.c_str(), value.c_str());
}
void put(const std::string& name, long long value) {
    put(name, std::to_string(value));
}

std::string program_text(cl_program p, cl_program_info what) {
    size_t n = 0;
    const cl_int err = clGetProgramInfo(p, what, 0, nullptr, &n);
    if (err != CL_SUCCESS) {
        return "error " + std::to_string(err);
    }
    std::string s(n, '\0');
    clGetProgramInfo(p, what, n, s.data(), nullptr);
    return s.c_str();
}

template <typename T>
long long program_value(cl_program p, cl_program_info what) {
    T v{};
    const cl_int err = clGetProgramInfo(p, what, sizeof v, &v, nullptr);
    return err == CL_SUCCESS ? static_cast<long long>(v) : err;
}

std::string build_text(cl_program p, cl_device_id d, cl_program_build_info what) {
    size_t n = 0;
    const cl_int err = clGetProgramBuildInfo(p, d, what, 0, nullptr, &n);
    if (err != CL_SUCCESS) {
        return "error " + std::to_string(err);
    }
    std::string s(n, '\0');
    clGetProgramBuildInfo(p, d, what, n, s.data(), nullptr);
    s.resize(std::strlen(s.c_str()));
    // PoCL names a temporary file of its own in compile errors.
    const auto temp = s.find("tempfile_");
    if (temp != std::string::npos) {
        s.replace(temp, s.find('.', temp) - temp, "tempfile");
    }
    return s;
}

template <typename T>
long long build_value(cl_program p, cl_device_id d, cl_program_build_info what) {
    T v{};
    const cl_int err = clGetProgramBuildInfo(p, d, what, sizeof v, &v, nullptr);
    return err == CL_SUCCESS ? static_cast<long long>(v) : err;
}

// Every query of a program, under `tag`.
void dump_program(const std::string& tag, cl_program p) {
    put(tag + ".reference_count", program_value<cl_uint>(p, CL_PROGRAM_REFERENCE_COUNT));
    cl_context context = nullptr;
    clGetProgramInfo(p, CL_PROGRAM_CONTEXT, sizeof context, &context, nullptr);
    put(tag + ".context_is_ours", context == g_context);
    put(tag + ".num_devices", program_value<cl_uint>(p, CL_PROGRAM_NUM_DEVICES));
    std::vector<cl_device_id> devices(g_devices.size());
    clGetProgramInfo(p, CL_PROGRAM_DEVICES, devices.size() * sizeof(cl_device_id), devices.data(),
                     nullptr);
    put(tag + ".devices_are_the_context's", devices == g_devices);
    put(tag + ".source", program_text(p, CL_PROGRAM_SOURCE));
    put(tag + ".num_kernels", program_value<size_t>(p, CL_PROGRAM_NUM_KERNELS));
    put(tag + ".kernel_names", program_text(p, CL_PROGRAM_KERNEL_NAMES));
    std::vector<size_t> sizes(g_devices.size());
    const cl_int err = clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizes.size() * sizeof(size_t),
                                        sizes.data(), nullptr);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        put(tag + ".binary_size_nonzero." + std::to_string(i), err == CL_SUCCESS && sizes[i] > 0);
    }
    for (std::size_t i = 0; i < g_devices.size(); ++i) {
        const std::string t = tag + ".device" + std::to_string(i);
        put(t + ".build_status",
            build_value<cl_build_status>(p, g_devices[i], CL_PROGRAM_BUILD_STATUS));
        put(t + ".build_log", build_text(p, g_devices[i], CL_PROGRAM_BUILD_LOG));
        put(t + ".build_options", build_text(p, g_devices[i], CL_PROGRAM_BUILD_OPTIONS));
        put(t + ".binary_type",
            build_value<cl_program_binary_type>(p, g_devices[i], CL_PROGRAM_BINARY_TYPE));
    }
}

cl_program from_source(const std::string& source) {
    const char* text = source.c_str();
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(g_context, 1, &text, nullptr, &err);
    if (err != CL_SUCCESS) {
        put("create_error", err);
    }
    return p;
}

// Runs `scale` of `p` over 4 items of 1.5 and returns the first.
float run_scale(cl_program p) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p, "scale", &err);
    float data[4] = {1.5f, 1.5f, 1.5f, 1.5f};
    cl_mem buf = clCreateBuffer(g_context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data,
                                data, &err);
    clSetKernelArg(k, 0, sizeof buf, &buf);
    const size_t global = 4;
    clEnqueueNDRangeKernel(g_queue, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
    clEnqueueReadBuffer(g_queue, buf, CL_TRUE, 0, sizeof data, data, 0, nullptr, nullptr);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    return data[0];
}

struct Notified {
    cl_program program = nullptr;
    int calls = 0;
};
void CL_CALLBACK on_built(cl_program p, void* data) {
    auto* n = static_cast<Notified*>(data);
    n->program = p;
    ++n->calls;
}

int g_release_calls = 0;
void CL_CALLBACK on_released(cl_program, void*) {
    ++g_release_calls;
}

void kernels_of(cl_program p) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p, "shift", &err);
    put("kernel.create", err);
    char name[64] = {};
    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, nullptr);
    put("kernel.function_name", name);
    cl_uint args = 0;
    clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr);
    put("kernel.num_args", args);
    cl_program owner = nullptr;
    clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof owner, &owner, nullptr);
    put("kernel.program_is_the_program", owner == p);
    put("program.reference_count_with_kernel",
        program_value<cl_uint>(p, CL_PROGRAM_REFERENCE_COUNT));
    cl_uint n = 0;
    put("kernels_in_program.count_call", clCreateKernelsInProgram(p, 0, nullptr, &n));
    put("kernels_in_program.count", n);
    std::vector<cl_kernel> all(n);
    put("kernels_in_program.create", clCreateKernelsInProgram(p, n, all.data(), nullptr));
    for (cl_kernel each : all) {
        clGetKernelInfo(each, CL_KERNEL_PROGRAM, sizeof owner, &owner, nullptr);
        put("kernels_in_program.program_is_the_program", owner == p);
        clReleaseKernel(each);
    }
    put("build_with_kernel_attached", clBuildProgram(p, 0, nullptr, "-DVAL=4", nullptr, nullptr));
    put("retain", clRetainProgram(p));
    put("after_retain.reference_count", program_value<cl_uint>(p, CL_PROGRAM_REFERENCE_COUNT));
    put("release", clReleaseProgram(p));
    // Deprecated in the headers (OpenCL 3.0 made it optional), still an entry point.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    put("release_callback", clSetProgramReleaseCallback(p, on_released, nullptr));
#pragma GCC diagnostic pop
    put("release_last", clReleaseProgram(p));  // the kernel keeps it alive
    clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof owner, &owner, nullptr);
    put("released.kernel_program_is_the_program", owner == p);
    put("released.reference_count", program_value<cl_uint>(p, CL_PROGRAM_REFERENCE_COUNT));
    put("release_callback.calls_before_kernel_release", g_release_calls);
    put("kernel.release", clReleaseKernel(k));
    put("release_callback.calls", g_release_calls);
}

void build_and_run(const std::string& prefix, cl_program p, const char* options) {
    dump_program(prefix + "before_build", p);
    Notified notified;
    put(prefix + "build", clBuildProgram(p, 0, nullptr, options, on_built, &notified));
    put(prefix + "build.notify_calls", notified.calls);
    put(prefix + "build.notify_program_is_the_program", notified.program == p);
    dump_program(prefix + "built", p);
    put(prefix + "run.val3", static_cast<long long>(run_scale(p) * 10));
    kernels_of(p);
}

int entry() {
    build_and_run("", from_source(kSource), "-DVAL=3");

    cl_program twice = from_source(kSource);
    put("twice.first", clBuildProgram(twice, 0, nullptr, "-DVAL=2", nullptr, nullptr));
    put("twice.run1", static_cast<long long>(run_scale(twice) * 10));
    put("twice.second", clBuildProgram(twice, 0, nullptr, "-DVAL=5", nullptr, nullptr));
    put("twice.run2", static_cast<long long>(run_scale(twice) * 10));
    dump_program("twice", twice);
    clReleaseProgram(twice);

    cl_program bad =
        from_source("kernel void broken(global float* a) { a[0] = undefined_name; }\n");
    put("bad.build", clBuildProgram(bad, 0, nullptr, nullptr, nullptr, nullptr));
    dump_program("bad", bad);
    put("bad.create_kernel", [&] {
        cl_int err = CL_SUCCESS;
        clCreateKernel(bad, "broken", &err);
        return err;
    }());
    clReleaseProgram(bad);

    cl_program parts = from_source(kSource);
    put("separate.compile",
        clCompileProgram(parts, 0, nullptr, "-DVAL=7", 0, nullptr, nullptr, nullptr, nullptr));
    cl_int err = CL_SUCCESS;
    cl_program linked =
        clLinkProgram(g_context, 0, nullptr, nullptr, 1, &parts, nullptr, nullptr, &err);
    put("separate.link", err);
    put("separate.run", static_cast<long long>(run_scale(linked) * 10));
    clReleaseProgram(linked);
    clReleaseProgram(parts);
    return 0;
}

// A program created and queried but never built.
int unbuilt() {
    cl_program p = from_source(kSource);
    dump_program("unbuilt", p);
    put("unbuilt.release", clReleaseProgram(p));
    return 0;
}

enum class Separately { no, yes };
int slow(Separately separately) {
    cl_program p = from_source(kcache::test::nested_macro_kernel(17));
    const auto start = std::chrono::steady_clock::now();
    const cl_int err =
        separately == Separately::yes
            ? clCompileProgram(p, 0, nullptr, nullptr, 0, nullptr, nullptr, nullptr, nullptr)
            : clBuildProgram(p, 0, nullptr, nullptr, nullptr, nullptr);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    put("slow.build", err);
    put("slow.ms", ms);
    put("slow.status", build_value<cl_build_status>(p, g_devices[0], CL_PROGRAM_BUILD_STATUS));
    std::string log = build_text(p, g_devices[0], CL_PROGRAM_BUILD_LOG);
    for (char& c : log) {
        c = c == '\n' ? '|' : c;
    }
    put("slow.log", log);
    clReleaseProgram(p);
    return 0;
}

// Nothing but the context main() created: an application that never builds.
int context_only() {
    return 0;
}

// exit() from another thread as soon as the context exists (while the
// layer may still be opening the cache).
int exit_from_thread() {
    std::thread([] { std::exit(0); }).join();
    return 1;  // not reached
}

// fork() as soon as the context exists (open_context forks when `g_fork`
// is set); the child uses no OpenCL and exits through exit() (its exit
// handlers run). Prints whether the child exited within 10 s, then builds
// and runs a program in the parent.
bool g_fork = false;
pid_t g_child = 0;

int fork_then_build() {
    const pid_t child = g_child;
    int status = 0;
    bool exited = false;
    for (int i = 0; i < 1000 && !exited; ++i) {
        exited = ::waitpid(child, &status, WNOHANG) == child;
        if (!exited) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    put("fork.child", exited && WIFEXITED(status) ? "exited" : "hung");
    if (!exited) {
        ::kill(child, SIGKILL);
        ::waitpid(child, &status, 0);
    }
    cl_program p = from_source(kSource);
    put("fork.build", clBuildProgram(p, 0, nullptr, "-DVAL=3", nullptr, nullptr));
    put("fork.run", static_cast<long long>(run_scale(p) * 10));
    clReleaseProgram(p);
    return 0;
}

bool open_context() {
    cl_platform_id platform = nullptr;
    cl_uint n = 0;
    if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) {
        return false;
    }
    g_devices.resize(n);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, g_devices.data(), nullptr);
    cl_int err = CL_SUCCESS;
    g_context = clCreateContext(nullptr, n, g_devices.data(), nullptr, nullptr, &err);
    if (g_fork && (g_child = ::fork()) == 0) {
        std::exit(0);
    }
    g_queue = clCreateCommandQueueWithProperties(g_context, g_devices[0], nullptr, &err);
    put("devices", n);
    return err == CL_SUCCESS;
}

}  // namespace probe

int main(int argc, char** argv) {
    using namespace probe;
    g_fork = argc == 2 && std::string(argv[1]) == "fork";
    const bool file = argc == 3 && std::string(argv[1]) == "il-run";
    if ((argc != 2 && !file) || !open_context()) {
        std::fprintf(stderr,
                     "usage: layer_probe entry|unbuilt|slow|slow-compile|il|il-run "
                     "FILE|context|exit|fork (needs an OpenCL device)\n");
        return 2;
    }
    const std::string mode = argv[1];
    const int rc = mode == "entry"          ? entry()
                   : mode == "unbuilt"      ? unbuilt()
                   : mode == "slow"         ? slow(Separately::no)
                   : mode == "slow-compile" ? slow(Separately::yes)
                   : mode == "context"      ? context_only()
                   : mode == "exit"         ? exit_from_thread()
                   : mode == "fork"         ? fork_then_build()
                   : mode == "il"           ? from_il()
                   : file                   ? il_run(argv[2])
                                            : 2;
    clReleaseCommandQueue(g_queue);
    clReleaseContext(g_context);
    return rc;
}
