/* kcache C API for operator libraries. Every function returns a status and
 * never aborts or lets an exception escape; kcache_last_error() gives the
 * message of the calling thread's last failure. Thread-safe. */
#ifndef KCACHE_KCACHE_H
#define KCACHE_KCACHE_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kcache_status {
    KCACHE_OK = 0,
    KCACHE_NOT_CACHED = 1,
    KCACHE_NOT_READY = 2,
    KCACHE_TIMEOUT = 3,
    KCACHE_CRASHED = 4,
    KCACHE_BUILD_ERROR = 5,
    KCACHE_UNSUPPORTED = 6,
    KCACHE_UNKNOWN_KERNEL = 7,
    KCACHE_INVALID_ARGUMENT = 8,
    KCACHE_DISABLED = 9,
    KCACHE_DEVICE_ERROR = 10,
    KCACHE_STORE_ERROR = 11,
    KCACHE_CONFIG_ERROR = 12,
    KCACHE_INTERNAL_ERROR = 13
} kcache_status;

typedef enum kcache_mode {
    KCACHE_MODE_BLOCKING = 0,
    KCACHE_MODE_FAIL_FAST = 1,
    KCACHE_MODE_BACKGROUND = 2
} kcache_mode;

typedef enum kcache_rung {
    KCACHE_RUNG_IN_PROCESS = 0,
    KCACHE_RUNG_USER_STORE = 1,
    KCACHE_RUNG_PACK = 2,
    KCACHE_RUNG_AOT = 3,
    KCACHE_RUNG_FAILURE_RECORD = 4,
    KCACHE_RUNG_JIT = 5,
    KCACHE_RUNG_NONE = 6
} kcache_rung;

typedef struct kcache_cache kcache_cache;

/* What answered a request. */
typedef struct kcache_info {
    kcache_rung rung;
    uint64_t total_us;
    uint64_t compile_us;
} kcache_info;

/* Opens the cache configured by the environment / config file / defaults. */
kcache_status kcache_open(kcache_cache** out);
/* Closes `cache` (NULL is ignored); waits briefly for background compiles. */
void kcache_close(kcache_cache* cache);

/* A built program for registry kernel `kernel` (name or alias) with variant
 * parameters `params` ("dtype=f16,act=relu"; NULL or "" for defaults).
 * `deadline_ms` 0 means the configured default. On KCACHE_OK `*out` holds a
 * program reference the caller releases with clReleaseProgram. `info` may be NULL. */
kcache_status kcache_get_program(kcache_cache* cache, cl_context context, cl_device_id device,
                                 const char* kernel, const char* params, uint32_t deadline_ms,
                                 kcache_mode mode, cl_program* out, kcache_info* info);

/* The same for the caller's own kernel: `source`, build `options` (may be
 * NULL), `entry_points` (`n_entry_points` names; 0 for all). */
kcache_status kcache_get_program_source(kcache_cache* cache, cl_context context,
                                        cl_device_id device, const char* source,
                                        const char* options, const char* const* entry_points,
                                        size_t n_entry_points, uint32_t deadline_ms,
                                        kcache_mode mode, cl_program* out, kcache_info* info);

/* Binary bytes for a registry kernel. `*out` is allocated with malloc (the
 * caller frees it), `*size` its length. */
kcache_status kcache_get_binary(kcache_cache* cache, cl_context context, cl_device_id device,
                                const char* kernel, const char* params, uint32_t deadline_ms,
                                kcache_mode mode, unsigned char** out, size_t* size);

typedef struct kcache_stats {
    uint64_t entries, raw_bytes, stored_bytes, evictions, corruptions;
    uint64_t in_process_hits, store_hits, pack_hits, aot_hits, failure_hits;
    uint64_t jit_compiles, jit_failures;
    uint64_t resident_hits, programs_released;
} kcache_stats;

kcache_status kcache_get_stats(kcache_cache* cache, kcache_stats* out);

/* Releases every program `cache` keeps for `context` (call it before
 * releasing a context for good); `*dropped` (may be NULL) gets how many.
 * Programs the caller holds stay valid. */
kcache_status kcache_forget_context(kcache_cache* cache, cl_context context, size_t* dropped);

/* The message of this thread's last failed call ("" after a success). */
const char* kcache_last_error(void);
/* A constant name for `status` ("KCACHE_TIMEOUT"). */
const char* kcache_status_name(kcache_status status);

#ifdef __cplusplus
}
#endif

#endif /* KCACHE_KCACHE_H */
