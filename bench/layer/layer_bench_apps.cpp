// Two small OpenCL programs for bench/layer/run.sh (plain OpenCL, no kcache
// code, so they measure the same with and without the layer):
//   layer_bench_apps load LIST      creates and builds a program from each
//       binary that LIST names, on the device it was built for, with its
//       build options, and prints `load_ms TOTAL read_load_ms TOTAL`: the
//       floor a cache hit cannot beat (the driver's own load of the bytes),
//       and the same with the file read first (what an application that
//       keeps its own binaries does). LIST has one line per binary, four
//       tab-separated fields: platform name, device name, build options,
//       file (run.sh writes it from the store's entries). An application
//       may build for every platform (clpeak does), so a binary is loaded
//       where it came from, never on a device it was not made for.
//   layer_bench_apps devices        prints `platform: NAME` and `  device:
//       NAME` for every platform and device the ICD loader offers (what an
//       application that builds for every platform, as clpeak does, meets).
//   layer_bench_apps load LIST each also prints each file's name and load ms.
//   layer_bench_apps enqueue N      builds one kernel, then enqueues it N
//       times (a finish every 64) and prints `enqueue_ms TOTAL`: calls the
//       layer does not take, to show what it costs them.
//   layer_bench_apps calls N        builds the same kernel, then sets its
//       argument N times (clSetKernelArg, which the layer does not take),
//       five rounds, and prints `set_kernel_arg_ns BEST`: the ns per call.

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "kcache/opencl.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Device {
    cl_device_id device = nullptr;
    cl_context context = nullptr;
};

Device first_device() {
    Device d;
    cl_platform_id platform = nullptr;
    if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &d.device, nullptr) != CL_SUCCESS) {
        return d;
    }
    cl_int err = CL_SUCCESS;
    d.context = clCreateContext(nullptr, 1, &d.device, nullptr, nullptr, &err);
    return d;
}

// A string the driver answers through `get` (clGetPlatformInfo,
// clGetDeviceInfo) for `handle`.
template <typename Handle, typename Info>
std::string text_of(cl_int(CL_API_CALL* get)(Handle, Info, size_t, void*, size_t*), Handle handle,
                    std::type_identity_t<Info> what) {
    size_t n = 0;
    get(handle, what, 0, nullptr, &n);
    std::string s(n, '\0');
    get(handle, what, n, s.data(), nullptr);
    return s.c_str();
}

std::vector<cl_platform_id> platforms() {
    cl_uint n = 0;
    clGetPlatformIDs(0, nullptr, &n);
    std::vector<cl_platform_id> all(n);
    clGetPlatformIDs(n, all.data(), nullptr);
    return all;
}

std::vector<cl_device_id> devices_of(cl_platform_id platform) {
    cl_uint n = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS) {
        return {};
    }
    std::vector<cl_device_id> all(n);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, all.data(), nullptr);
    return all;
}

int list_devices() {
    for (cl_platform_id p : platforms()) {
        std::printf("platform: %s\n", text_of(clGetPlatformInfo, p, CL_PLATFORM_NAME).c_str());
        for (cl_device_id d : devices_of(p)) {
            std::printf("  device: %s\n", text_of(clGetDeviceInfo, d, CL_DEVICE_NAME).c_str());
        }
    }
    return 0;
}

// The device named `device` on the platform named `platform`, with a context
// of its own (null when there is none).
Device named_device(const std::string& platform, const std::string& device) {
    for (cl_platform_id p : platforms()) {
        if (text_of(clGetPlatformInfo, p, CL_PLATFORM_NAME) != platform) {
            continue;
        }
        for (cl_device_id d : devices_of(p)) {
            if (text_of(clGetDeviceInfo, d, CL_DEVICE_NAME) == device) {
                cl_int err = CL_SUCCESS;
                return {d, clCreateContext(nullptr, 1, &d, nullptr, nullptr, &err)};
            }
        }
    }
    return {};
}

struct Binary {
    std::string platform, device, options, file;
};

std::vector<Binary> read_list(const char* path) {
    std::vector<Binary> list;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> f;
        for (std::size_t at = 0;;) {
            const std::size_t tab = line.find('\t', at);
            f.push_back(line.substr(at, tab - at));
            if (tab == std::string::npos) {
                break;
            }
            at = tab + 1;
        }
        if (f.size() == 4) {
            list.push_back({f[0], f[1], f[2], f[3]});
        }
    }
    return list;
}

int load(const char* list_path, bool each) {
    const std::vector<Binary> list = read_list(list_path);
    std::map<std::string, Device> devices;  // one context per device, made before the clock
    for (const Binary& b : list) {
        Device& d = devices[b.platform + '\t' + b.device];
        if (d.context == nullptr && (d = named_device(b.platform, b.device)).context == nullptr) {
            std::fprintf(stderr, "%s: no device '%s' on a platform '%s'\n", b.file.c_str(),
                         b.device.c_str(), b.platform.c_str());
            return 1;
        }
    }
    double loads = 0;
    double with_reads = 0;
    for (const Binary& b : list) {
        const Device& d = devices[b.platform + '\t' + b.device];
        const auto read_start = Clock::now();
        std::ifstream in(b.file, std::ios::binary);
        const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                               std::istreambuf_iterator<char>());
        const unsigned char* data = bytes.data();
        const size_t size = bytes.size();
        const auto start = Clock::now();
        cl_int err = CL_SUCCESS;
        cl_program p =
            clCreateProgramWithBinary(d.context, 1, &d.device, &size, &data, nullptr, &err);
        const cl_int built =
            p == nullptr ? err : clBuildProgram(p, 0, nullptr, b.options.c_str(), nullptr, nullptr);
        if (err != CL_SUCCESS || built != CL_SUCCESS) {
            std::fprintf(stderr, "%s (%zu bytes): the driver did not load it (%d, %d)\n",
                         b.file.c_str(), size, err, built);
            return 1;
        }
        const double ms = ms_since(start);
        loads += ms;
        with_reads += ms_since(read_start);
        if (each) {
            std::printf("%s %.3f\n", b.file.substr(b.file.rfind('/') + 1).c_str(), ms);
        }
        clReleaseProgram(p);
    }
    for (auto& [name, d] : devices) {
        clReleaseContext(d.context);
    }
    std::printf("load_ms %.3f read_load_ms %.3f\n", loads, with_reads);
    return 0;
}

// One kernel built from source, its buffer and a queue: what the enqueue
// and calls modes run (null members when a step failed).
struct Launch {
    cl_program program = nullptr;
    cl_kernel kernel = nullptr;
    cl_mem buffer = nullptr;
    cl_command_queue queue = nullptr;
    size_t global = 64;

    explicit Launch(const Device& d) {
        const char* source = "kernel void inc(global int* a) { a[get_global_id(0)] += 1; }";
        cl_int err = CL_SUCCESS;
        program = clCreateProgramWithSource(d.context, 1, &source, nullptr, &err);
        if (program == nullptr ||
            clBuildProgram(program, 0, nullptr, nullptr, nullptr, nullptr) != CL_SUCCESS) {
            return;
        }
        kernel = clCreateKernel(program, "inc", &err);
        buffer = clCreateBuffer(d.context, CL_MEM_READ_WRITE, global * sizeof(int), nullptr, &err);
        queue = clCreateCommandQueueWithProperties(d.context, d.device, nullptr, &err);
        if (kernel == nullptr || buffer == nullptr || queue == nullptr) {
            return;
        }
        // The first launch may finish the driver's code generation (PoCL
        // does it for a program loaded from a binary): not part of a loop.
        clSetKernelArg(kernel, 0, sizeof buffer, &buffer);
        clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
        clFinish(queue);
    }
    ~Launch() {
        if (queue != nullptr) {
            clReleaseCommandQueue(queue);
        }
        if (buffer != nullptr) {
            clReleaseMemObject(buffer);
        }
        if (kernel != nullptr) {
            clReleaseKernel(kernel);
        }
        if (program != nullptr) {
            clReleaseProgram(program);
        }
    }
    Launch(const Launch&) = delete;
    Launch& operator=(const Launch&) = delete;
    bool ready() const { return queue != nullptr; }
};

int enqueue(const Launch& l, long n) {
    const auto start = Clock::now();
    for (long i = 0; i < n; ++i) {
        clSetKernelArg(l.kernel, 0, sizeof l.buffer, &l.buffer);
        clEnqueueNDRangeKernel(l.queue, l.kernel, 1, nullptr, &l.global, nullptr, 0, nullptr,
                               nullptr);
        if (i % 64 == 63) {
            clFinish(l.queue);
        }
    }
    clFinish(l.queue);
    std::printf("enqueue_ms %.3f\n", ms_since(start));
    return 0;
}

// A cheap call the layer does not take, in a loop: what the layer adds to
// every such call, free of the enqueue's own spread. The best of five
// rounds of `n` calls.
int calls(const Launch& l, long n) {
    double best = 0;
    for (int round = 0; round < 5; ++round) {
        const auto start = Clock::now();
        for (long i = 0; i < n; ++i) {
            clSetKernelArg(l.kernel, 0, sizeof l.buffer, &l.buffer);
        }
        const double ns = ms_since(start) * 1e6 / static_cast<double>(n);
        best = round == 0 || ns < best ? ns : best;
    }
    std::printf("set_kernel_arg_ns %.2f\n", best);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "devices" && argc == 2) {
        return list_devices();
    }
    if (mode == "load" && argc == 4 && std::string(argv[3]) == "each") {
        return load(argv[2], true);
    }
    if ((mode != "load" && mode != "enqueue" && mode != "calls") || argc != 3) {
        std::fprintf(stderr,
                     "usage: layer_bench_apps load LIST [each] | enqueue N | calls N | devices\n");
        return 2;
    }
    if (mode == "load") {
        return load(argv[2], false);
    }
    const Device d = first_device();
    if (d.context == nullptr) {
        std::fprintf(stderr, "layer_bench_apps: no OpenCL device\n");
        return 2;
    }
    int rc = 1;
    {
        const Launch launch(d);
        if (!launch.ready()) {
            std::fprintf(stderr, "layer_bench_apps: the kernel's set-up failed\n");
        } else {
            const long n = std::stol(argv[2]);
            rc = mode == "enqueue" ? enqueue(launch, n) : calls(launch, n);
        }
    }
    clReleaseContext(d.context);
    return rc;
}
