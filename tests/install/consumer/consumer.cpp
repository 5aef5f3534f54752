// A stand-alone user of an installed kcache: builds `dot` on the first
// OpenCL device and prints the status and the rung that answered.
#include <kcache/kcache.hpp>

#include <cstdio>

int main() {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) {
        std::puts("no-device");
        return 2;
    }
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    kcache::Outcome opened;
    auto cache = kcache::Cache::open_default(&opened);
    if (!cache) {
        std::printf("open-failed %s\n", opened.message.c_str());
        return 1;
    }
    auto program = cache->program(ctx, device, kcache::KernelRequest{"dot", {}, {}, {}});
    std::printf("%s %s\n", kcache::to_string(program.outcome().status),
                kcache::to_string(program.outcome().rung));
    program = kcache::Program();
    cache.reset();
    clReleaseContext(ctx);
    return 0;
}
