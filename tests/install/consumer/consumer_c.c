/* A C user of an installed kcache (through pkg-config): prints the status of
 * a fail-fast lookup of an already cached kernel and whether a program came. */
#include <kcache/kcache.h>
#include <stdio.h>

int main(void) {
    cl_platform_id platform = NULL;
    cl_device_id device = NULL;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) {
        puts("no-device");
        return 2;
    }
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    kcache_cache* cache = NULL;
    kcache_status s = kcache_open(&cache);
    cl_program program = NULL;
    if (s == KCACHE_OK) {
        kcache_kernel_request request = KCACHE_KERNEL_REQUEST_INIT;
        request.kernel = "dot";
        request.mode = KCACHE_MODE_FAIL_FAST;
        s = kcache_get_kernel_program(cache, ctx, device, &request, &program, NULL);
    }
    printf("%s %d\n", kcache_status_name(s), program != NULL);
    if (program != NULL) {
        clReleaseProgram(program);
    }
    kcache_close(cache);
    clReleaseContext(ctx);
    return 0;
}
