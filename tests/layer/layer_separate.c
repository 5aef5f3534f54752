/* layer_separate: an ordinary OpenCL application in C (no kcache code) that
 * the layer tests run with and without the layer. It builds with separate
 * compilation: a program compiled with options and linked alone, linked
 * again, then with link options, and a program compiled with an input header
 * and linked (the header defines OFFSET as argv[1], 40 by default). It
 * prints one `name=value` line per answer (status, options, binary type,
 * callbacks, kernels, results) for the test to compare. */

#include <stdio.h>
#include <string.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

static const char* kScale =
    "kernel void scale(global float* x) { size_t i = get_global_id(0); x[i] = x[i] * SCALE + 1; }";
static const char* kWithHeader =
    "#include \"offset.h\"\n"
    "kernel void shift(global float* x) { size_t i = get_global_id(0); x[i] += OFFSET; }";

static cl_context g_context;
static cl_device_id g_device;
static cl_command_queue g_queue;

static void CL_CALLBACK on_done(cl_program p, void* data) {
    *(cl_program*)data = p;
}

static void put_build_info(const char* what, cl_program p) {
    cl_build_status status = 0;
    cl_program_binary_type type = 0;
    char text[4096] = "";
    printf("%s.status=%d\n", what,
           clGetProgramBuildInfo(p, g_device, CL_PROGRAM_BUILD_STATUS, sizeof status, &status,
                                 NULL) == CL_SUCCESS
               ? (int)status
               : -999);
    clGetProgramBuildInfo(p, g_device, CL_PROGRAM_BINARY_TYPE, sizeof type, &type, NULL);
    printf("%s.binary_type=%d\n", what, (int)type);
    clGetProgramBuildInfo(p, g_device, CL_PROGRAM_BUILD_OPTIONS, sizeof text, text, NULL);
    printf("%s.options=%s\n", what, text);
}

/* Runs `name` of `p` on 4 floats 1..4 and prints the results. */
static void put_results(const char* what, cl_program p, const char* name) {
    float x[4] = {1, 2, 3, 4};
    size_t n = 4;
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p, name, &err);
    printf("%s.kernel=%d\n", what, err);
    if (p == NULL || k == NULL) {
        return;
    }
    cl_program owner = NULL;
    clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof owner, &owner, NULL);
    printf("%s.kernel_program_is_linked=%d\n", what, owner == p);
    cl_mem buffer =
        clCreateBuffer(g_context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
    clSetKernelArg(k, 0, sizeof buffer, &buffer);
    clEnqueueNDRangeKernel(g_queue, k, 1, NULL, &n, NULL, 0, NULL, NULL);
    clEnqueueReadBuffer(g_queue, buffer, CL_TRUE, 0, sizeof x, x, 0, NULL, NULL);
    printf("%s.results=%g %g %g %g\n", what, x[0], x[1], x[2], x[3]);
    clReleaseMemObject(buffer);
    clReleaseKernel(k);
}

static cl_program link_one(const char* what, cl_program input, const char* options) {
    cl_program called = NULL;
    cl_int err = CL_SUCCESS;
    cl_program linked =
        clLinkProgram(g_context, 1, &g_device, options, 1, &input, on_done, &called, &err);
    clFinish(g_queue);
    printf("%s.link=%d\n", what, err);
    printf("%s.link_callback_is_linked=%d\n", what, linked != NULL && called == linked);
    if (linked != NULL) {
        size_t size = 0;
        clGetProgramInfo(linked, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
        printf("%s.binary_size_nonzero=%d\n", what, size > 0);
        put_build_info(what, linked);
    }
    return linked;
}

static void scaled(void) {
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(g_context, 1, &kScale, NULL, &err);
    cl_program called = NULL;
    err = clCompileProgram(p, 1, &g_device, "-DSCALE=3", 0, NULL, NULL, on_done, &called);
    printf("scale.compile=%d\n", err);
    printf("scale.compile_callback_is_program=%d\n", called == p);
    put_build_info("scale.compiled", p);
    cl_program linked = link_one("scale", p, NULL);
    cl_program again = link_one("scale_again", p, NULL);
    cl_program denormals = link_one("scale_denormals", p, "-cl-denorms-are-zero");
    clReleaseProgram(p);
    put_results("scale", linked, "scale");
    put_results("scale_again", again, "scale");
    put_results("scale_denormals", denormals, "scale");
    clReleaseProgram(linked);
    clReleaseProgram(again);
    if (denormals != NULL) {
        clReleaseProgram(denormals);
    }
}

static void with_header(const char* offset) {
    char text[64];
    const char* header_text = text;
    snprintf(text, sizeof text, "#define OFFSET %s\n", offset);
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(g_context, 1, &kWithHeader, NULL, &err);
    cl_program header = clCreateProgramWithSource(g_context, 1, &header_text, NULL, &err);
    const char* name = "offset.h";
    err = clCompileProgram(p, 1, &g_device, "", 1, &header, &name, NULL, NULL);
    printf("shift.compile=%d\n", err);
    put_build_info("shift.compiled", p);
    cl_program linked = link_one("shift", p, NULL);
    put_results("shift", linked, "shift");
    clReleaseProgram(linked);
    clReleaseProgram(header);
    clReleaseProgram(p);
}

int main(int argc, char** argv) {
    cl_platform_id platform = NULL;
    cl_int err = clGetPlatformIDs(1, &platform, NULL);
    if (err != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &g_device, NULL) != CL_SUCCESS) {
        fprintf(stderr, "no OpenCL device\n");
        return 2;
    }
    g_context = clCreateContext(NULL, 1, &g_device, NULL, NULL, &err);
    g_queue = clCreateCommandQueueWithProperties(g_context, g_device, NULL, &err);
    scaled();
    with_header(argc > 1 ? argv[1] : "40");
    clReleaseCommandQueue(g_queue);
    clReleaseContext(g_context);
    return 0;
}
