/* A C caller built against kcache 0.2.0's headers (abi-0.2/), run against
 * this tree's library: every 0.2 entry point on the test device, with 0.2's
 * smaller kcache_stats (a guard after it must stay untouched). Prints one
 * line per step; exit 0 when every step answered as 0.2 documents. */
#include <kcache/kcache.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void expect(int ok, const char* what, kcache_status s) {
    printf("%s %s: %s\n", ok ? "ok" : "FAILED", what, kcache_status_name(s));
    if (!ok) {
        printf("  last error: %s\n", kcache_last_error());
        ++failures;
    }
}

static const char* scale_source =
    "__kernel void scale(__global const float* in, __global float* out, float k) {\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = in[i] * k + 5.0f;\n"
    "}\n";

static void log_to_stdout(kcache_log_level level, const char* message, void* user) {
    (void)user;
    printf("log %d: %s\n", (int)level, message);
}

static void requests(kcache_cache* cache, cl_context ctx, cl_device_id dev) {
    cl_program program = NULL;
    kcache_info info = KCACHE_INFO_INIT;
    kcache_status s =
        kcache_get_program(cache, ctx, dev, "dot", NULL, 0, KCACHE_MODE_FAIL_FAST, &program, &info);
    expect(s == KCACHE_NOT_CACHED && program == NULL, "fail-fast miss", s);
    s = kcache_get_program(cache, ctx, dev, "dot", "dtype=f16", 0, KCACHE_MODE_BLOCKING, &program,
                           &info);
    expect(s == KCACHE_OK && program != NULL && info.rung == KCACHE_RUNG_JIT, "program (jit)", s);
    if (program != NULL) {
        clReleaseProgram(program);
    }
    const char* entry = "scale";
    program = NULL;
    s = kcache_get_program_source(cache, ctx, dev, scale_source, "", &entry, 1, 0,
                                  KCACHE_MODE_BLOCKING, &program, &info);
    expect(s == KCACHE_OK && program != NULL, "program from source", s);
    if (program != NULL) {
        clReleaseProgram(program);
    }
    unsigned char* bytes = NULL;
    size_t size = 0;
    s = kcache_get_binary(cache, ctx, dev, "dot", "dtype=f16", 0, KCACHE_MODE_FAIL_FAST, &bytes,
                          &size);
    expect(s == KCACHE_OK && bytes != NULL && size > 0, "binary (freed with free)", s);
    free(bytes);
    s = kcache_get_program(cache, ctx, dev, "dot", NULL, 0, (kcache_mode)42, &program, NULL);
    expect(s == KCACHE_INVALID_ARGUMENT, "unknown mode", s);
}

static void stats(kcache_cache* cache) {
    struct {
        kcache_stats stats; /* 0.2's size */
        unsigned char guard[4096];
    } out;
    out.stats = (kcache_stats)KCACHE_STATS_INIT;
    memset(out.guard, 0x5A, sizeof out.guard);
    kcache_status s = kcache_get_stats(cache, &out.stats);
    int guard_intact = 1;
    for (size_t i = 0; i < sizeof out.guard; ++i) {
        guard_intact &= out.guard[i] == 0x5A;
    }
    expect(s == KCACHE_OK && out.stats.jit_compiles == 2 && guard_intact,
           "stats of 0.2's size, nothing written past it", s);
}

int main(void) {
    cl_platform_id platform = NULL;
    cl_device_id dev = NULL;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
        puts("no OpenCL device");
        return 2;
    }
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, NULL);
    printf("headers %s, library %s\n", KCACHE_VERSION_STRING, kcache_version());
    kcache_set_log_handler(log_to_stdout, NULL);
    kcache_cache* cache = NULL;
    kcache_status s = kcache_open(&cache);
    expect(s == KCACHE_OK, "open", s);
    if (cache != NULL) {
        requests(cache, ctx, dev);
        stats(cache);
        size_t dropped = 0;
        s = kcache_forget_context(cache, ctx, &dropped);
        expect(s == KCACHE_OK && dropped > 0, "forget context", s);
    }
    kcache_close(cache);
    kcache_set_log_handler(NULL, NULL);
    clReleaseContext(ctx);
    return failures == 0 ? 0 : 1;
}
