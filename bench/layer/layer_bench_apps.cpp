// Two small OpenCL programs for bench/layer/run.sh (plain OpenCL, no kcache
// code, so they measure the same with and without the layer):
//   layer_bench_apps load FILE...   creates and builds a program from each
//       binary file on the first device and prints `load_ms TOTAL
//       read_load_ms TOTAL`: the floor a cache hit cannot beat (the driver's
//       own load of the bytes), and the same with the file read first (what
//       an application that keeps its own binaries does).
//   layer_bench_apps enqueue N      builds one kernel, then enqueues it N
//       times (a finish every 64) and prints `enqueue_ms TOTAL`: calls the
//       layer does not take, to show what it costs them.

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
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

int load(const Device& d, int argc, char** argv) {
    double loads = 0;
    double with_reads = 0;
    for (int i = 2; i < argc; ++i) {
        const auto read_start = Clock::now();
        std::ifstream in(argv[i], std::ios::binary);
        const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                               std::istreambuf_iterator<char>());
        const unsigned char* data = bytes.data();
        const size_t size = bytes.size();
        const auto start = Clock::now();
        cl_int err = CL_SUCCESS;
        cl_program p =
            clCreateProgramWithBinary(d.context, 1, &d.device, &size, &data, nullptr, &err);
        if (err != CL_SUCCESS || clBuildProgram(p, 0, nullptr, nullptr, nullptr, nullptr) != 0) {
            std::fprintf(stderr, "%s: the driver did not load it\n", argv[i]);
            return 1;
        }
        loads += ms_since(start);
        with_reads += ms_since(read_start);
        clReleaseProgram(p);
    }
    std::printf("load_ms %.3f read_load_ms %.3f\n", loads, with_reads);
    return 0;
}

int enqueue(const Device& d, long n) {
    const char* source = "kernel void inc(global int* a) { a[get_global_id(0)] += 1; }";
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(d.context, 1, &source, nullptr, &err);
    clBuildProgram(p, 0, nullptr, nullptr, nullptr, nullptr);
    cl_kernel k = clCreateKernel(p, "inc", &err);
    cl_mem buf = clCreateBuffer(d.context, CL_MEM_READ_WRITE, 64 * sizeof(int), nullptr, &err);
    cl_command_queue q = clCreateCommandQueueWithProperties(d.context, d.device, nullptr, &err);
    if (err != CL_SUCCESS) {
        std::fprintf(stderr, "setup failed: %d\n", err);
        return 1;
    }
    const size_t global = 64;
    // The first launch may finish the driver's code generation (PoCL does it
    // for a program loaded from a binary): not part of the loop.
    clSetKernelArg(k, 0, sizeof buf, &buf);
    clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
    clFinish(q);
    const auto start = Clock::now();
    for (long i = 0; i < n; ++i) {
        clSetKernelArg(k, 0, sizeof buf, &buf);
        clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
        if (i % 64 == 63) {
            clFinish(q);
        }
    }
    clFinish(q);
    std::printf("enqueue_ms %.3f\n", ms_since(start));
    clReleaseCommandQueue(q);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(p);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    const Device d = first_device();
    if (d.context == nullptr || (mode != "load" && mode != "enqueue") ||
        (mode == "enqueue" && argc != 3)) {
        std::fprintf(stderr, "usage: layer_bench_apps load FILE... | enqueue N\n");
        return 2;
    }
    const int rc = mode == "load" ? load(d, argc, argv) : enqueue(d, std::stol(argv[2]));
    clReleaseContext(d.context);
    return rc;
}
