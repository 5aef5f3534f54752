/* layer_separate: an ordinary OpenCL application in C (no kcache code) that
 * the layer tests run with and without the layer. It builds with separate
 * compilation: a program compiled with options and linked alone, linked
 * again, then with link options; a program compiled with an input header
 * and linked (the header defines OFFSET as argv[1], 40 by default); and two
 * programs, one calling a function the other defines, linked together
 * without options and with `-cl-mad-enable` (argv[2], when given, is
 * the second link's options instead). It prints one `name=value` line per
 * answer (status, options, binary type, callbacks, kernels, results) for the
 * test to compare. `slow-link LEVELS OPTIONS` links a program whose compile
 * takes a while (LEVELS levels of nested macros) and another with OPTIONS;
 * `include OPTIONS` links the two programs, `twice`'s BIAS from a bias.h
 * that OPTIONS (its compile's, `-I DIR`) find; `pair` links the two
 * programs alone; `compile-one use_twice|broken` compiles one program
 * alone (use_twice, or one with a compile error), prints how long it took
 * and its log, then builds the same text. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

static const char* kScale =
    "kernel void scale(global float* x) { size_t i = get_global_id(0); x[i] = x[i] * SCALE + 1; }";
static const char* kWithHeader =
    "#include \"offset.h\"\n"
    "kernel void shift(global float* x) { size_t i = get_global_id(0); x[i] += OFFSET; }";

static const char* kTwice = "float twice(float v) { return 2 * v + BIAS; }";
static const char* kUseTwice =
    "float twice(float v);\n"
    "kernel void use_twice(global float* x) { size_t i = get_global_id(0); x[i] = twice(x[i]); }";
static const char* kBroken = "kernel void broken(global float* x) { x[0] = undefined_name; }";

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

static void link_pair(const char* what, cl_program* pair, const char* options) {
    cl_program called = NULL;
    cl_int err = CL_SUCCESS;
    cl_program linked =
        clLinkProgram(g_context, 1, &g_device, options, 2, pair, on_done, &called, &err);
    printf("%s.link=%d\n", what, err);
    printf("%s.link_callback_is_linked=%d\n", what, linked != NULL && called == linked);
    if (linked != NULL) {
        put_build_info(what, linked);
        put_results(what, linked, "use_twice");
        clReleaseProgram(linked);
    }
}

/* Two programs: `use_twice` calls `twice`, which the other defines (its
 * BIAS from the options, or from the bias.h that `include_options` find).
 * They are linked only when both compiled (PoCL's link asserts otherwise). */
static void pair(const char* options, const char* include_options) {
    cl_int err = CL_SUCCESS;
    cl_program both[2];
    char with_header[256], twice_options[256] = "-DBIAS=1";
    const char* twice = kTwice;
    if (include_options != NULL) {
        snprintf(with_header, sizeof with_header, "#include \"bias.h\"\n%s", kTwice);
        snprintf(twice_options, sizeof twice_options, "%s", include_options);
        twice = with_header;
    }
    both[0] = clCreateProgramWithSource(g_context, 1, &twice, NULL, &err);
    both[1] = clCreateProgramWithSource(g_context, 1, &kUseTwice, NULL, &err);
    err = clCompileProgram(both[0], 1, &g_device, twice_options, 0, NULL, NULL, NULL, NULL);
    printf("twice.compile=%d\n", err);
    const cl_int used = clCompileProgram(both[1], 1, &g_device, NULL, 0, NULL, NULL, NULL, NULL);
    printf("use_twice.compile=%d\n", used);
    if (err == CL_SUCCESS && used == CL_SUCCESS) {
        link_pair("pair", both, NULL);
        link_pair("pair_options", both, options);
    }
    clReleaseProgram(both[0]);
    clReleaseProgram(both[1]);
}

/* A kernel of `levels` levels of macros, each twice the one below. */
static char* nested_macros(int levels) {
    char* text = malloc(64 * (size_t)(levels + 4));
    char* at = text + sprintf(text, "#define L0(x) x = x * 1.0001f + 0.5f;\n");
    for (int i = 1; i <= levels; ++i) {
        at += sprintf(at, "#define L%d(x) L%d(x) L%d(x)\n", i, i - 1, i - 1);
    }
    sprintf(at, "kernel void slow(global float* a) { float x = a[0]; L%d(x) a[0] = x; }\n", levels);
    return text;
}

static long ms_since(const struct timespec* start) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* The build log of `p` on one line ('|' for each newline). */
static void put_log(const char* what, cl_program p) {
    char log[4096] = "";
    clGetProgramBuildInfo(p, g_device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    for (char* c = log; *c != '\0'; ++c) {
        *c = *c == '\n' ? '|' : *c;
    }
    printf("%s.log=%s\n", what, log);
}

/* Compiles `text` alone (its answer, milliseconds, build info and log),
 * then builds a program of the same text. */
static void compile_one(const char* what, const char* text) {
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(g_context, 1, &text, NULL, &err);
    cl_program called = NULL;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    err = clCompileProgram(p, 1, &g_device, NULL, 0, NULL, NULL, on_done, &called);
    printf("%s.compile=%d\n%s.ms=%ld\n", what, err, what, ms_since(&start));
    printf("%s.compile_callback_is_program=%d\n", what, called == p);
    put_build_info(what, p);
    put_log(what, p);
    clReleaseProgram(p);
    cl_program built = clCreateProgramWithSource(g_context, 1, &text, NULL, &err);
    printf("%s.build=%d\n", what, clBuildProgram(built, 1, &g_device, NULL, NULL, NULL));
    clReleaseProgram(built);
}

static void slow_link(int levels, const char* options) {
    char* slow = nested_macros(levels);
    const char* texts[2] = {slow, "kernel void other(global float* a) { a[0] = 1; }"};
    cl_program parts[2];
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < 2; ++i) {
        parts[i] = clCreateProgramWithSource(g_context, 1, &texts[i], NULL, &err);
        printf("slow_link.compile=%d\n",
               clCompileProgram(parts[i], 1, &g_device, NULL, 0, NULL, NULL, NULL, NULL));
    }
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    cl_program linked = clLinkProgram(g_context, 1, &g_device, options, 2, parts, NULL, NULL, &err);
    printf("slow_link.link=%d\nslow_link.ms=%ld\n", err, ms_since(&start));
    if (linked != NULL) {
        put_build_info("slow_link", linked);
        put_log("slow_link", linked);
        clReleaseProgram(linked);
    }
    clReleaseProgram(parts[0]);
    clReleaseProgram(parts[1]);
    free(slow);
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
    if (argc > 1 && strcmp(argv[1], "slow-link") == 0) {
        slow_link(argc > 2 ? atoi(argv[2]) : 12, argc > 3 ? argv[3] : NULL);
    } else if (argc > 2 && strcmp(argv[1], "include") == 0) {
        pair("-cl-mad-enable", argv[2]);
    } else if (argc > 1 && strcmp(argv[1], "pair") == 0) {
        pair("-cl-mad-enable", NULL);
    } else if (argc > 2 && strcmp(argv[1], "compile-one") == 0) {
        compile_one(argv[2], strcmp(argv[2], "broken") == 0 ? kBroken : kUseTwice);
    } else {
        scaled();
        with_header(argc > 1 ? argv[1] : "40");
        pair(argc > 2 ? argv[2] : "-cl-mad-enable", NULL);
    }
    clReleaseCommandQueue(g_queue);
    clReleaseContext(g_context);
    return 0;
}
