/* The C API's _INIT macros in C (C99, -Wall -Wextra -pedantic -Werror):
 * constant initializers usable at file scope, struct_size set, every other
 * field zero (info's rung KCACHE_RUNG_NONE), and the 0.2 status names. */
#include <kcache/kcache.h>
#include <stdio.h>

static kcache_stats file_scope_stats = KCACHE_STATS_INIT;

static int check(int ok, const char* what) {
    if (!ok) {
        fprintf(stderr, "failed: %s\n", what);
    }
    return ok ? 0 : 1;
}

int main(void) {
    kcache_info info = KCACHE_INFO_INIT;
    kcache_kernel_request kr = KCACHE_KERNEL_REQUEST_INIT;
    kcache_source_request sr = KCACHE_SOURCE_REQUEST_INIT;
    kcache_stats stats = KCACHE_STATS_INIT;
    cl_program program = NULL;
    int failures = 0;
    failures += check(info.struct_size == sizeof info && info.rung == KCACHE_RUNG_NONE &&
                          info.total_us == 0 && info.compile_us == 0,
                      "KCACHE_INFO_INIT");
    failures += check(kr.struct_size == sizeof kr && kr.kernel == NULL && kr.params == NULL &&
                          kr.deadline_ms == 0 && kr.mode == KCACHE_MODE_BLOCKING,
                      "KCACHE_KERNEL_REQUEST_INIT");
    failures += check(sr.struct_size == sizeof sr && sr.source == NULL && sr.n_entry_points == 0 &&
                          sr.warmup_local_size == 0,
                      "KCACHE_SOURCE_REQUEST_INIT");
    failures +=
        check(stats.struct_size == sizeof stats && stats.entries == 0 &&
                  stats.store_write_failures == 0 && file_scope_stats.struct_size == sizeof stats,
              "KCACHE_STATS_INIT");
    failures += check(KCACHE_OK == KCACHE_STATUS_OK && KCACHE_DISABLED == KCACHE_STATUS_DISABLED,
                      "0.2 status names");
    /* Linked against the library: a NULL cache is a status, not a crash. */
    kr.kernel = "dot";
    failures += check(kcache_get_kernel_program(NULL, NULL, NULL, &kr, &program, &info) ==
                          KCACHE_STATUS_INVALID_ARGUMENT,
                      "NULL cache");
    return failures == 0 ? 0 : 1;
}
