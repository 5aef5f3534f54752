/* kcache C API for operator libraries. Every function returns a status and
 * never aborts or lets an exception escape; kcache_last_error() gives the
 * message of the calling thread's last failure. Thread-safe. */
#ifndef KCACHE_KCACHE_H
#define KCACHE_KCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "kcache/opencl.h"
#include "kcache/version.h"

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
    KCACHE_RUNG_NONE = 6,
    KCACHE_RUNG_REMOTE = 7
} kcache_rung;

typedef struct kcache_cache kcache_cache;

/* What answered a request. Extensible: set `struct_size` to
 * sizeof(kcache_info) (KCACHE_INFO_INIT does) before passing it; kcache
 * fills only the fields that fit in `struct_size`, so a program built against
 * an older header keeps working with a newer library. */
typedef struct kcache_info {
    size_t struct_size;
    kcache_rung rung;
    uint64_t total_us;
    uint64_t compile_us;
} kcache_info;
#define KCACHE_INFO_INIT \
    { sizeof(kcache_info), KCACHE_RUNG_NONE, 0, 0 }

/* Returns the library's version ("0.2.0"); compare with KCACHE_VERSION_STRING
 * to detect a header/library mismatch. */
KCACHE_API const char* kcache_version(void);

/* Opens the cache configured by the environment / config file / defaults. */
KCACHE_API kcache_status kcache_open(kcache_cache** out);
/* Closes `cache` (NULL is ignored); waits briefly for background compiles. */
KCACHE_API void kcache_close(kcache_cache* cache);

/* A built program for registry kernel `kernel` (name or alias) with variant
 * parameters `params` ("dtype=f16,act=relu"; NULL or "" for defaults).
 * `deadline_ms` 0 means the configured default. On KCACHE_OK `*out` holds a
 * program reference the caller releases with clReleaseProgram. `info` may be
 * NULL; otherwise its `struct_size` must be set (KCACHE_INVALID_ARGUMENT if 0). */
KCACHE_API kcache_status kcache_get_program(kcache_cache* cache, cl_context context,
                                            cl_device_id device, const char* kernel,
                                            const char* params, uint32_t deadline_ms,
                                            kcache_mode mode, cl_program* out, kcache_info* info);

/* The same for the caller's own kernel: `source`, build `options` (may be
 * NULL), `entry_points` (`n_entry_points` names; 0 for all). */
KCACHE_API kcache_status kcache_get_program_source(
    kcache_cache* cache, cl_context context, cl_device_id device, const char* source,
    const char* options, const char* const* entry_points, size_t n_entry_points,
    uint32_t deadline_ms, kcache_mode mode, cl_program* out, kcache_info* info);

/* Binary bytes for a registry kernel. `*out` is allocated with malloc (the
 * caller frees it), `*size` its length. The request goes through the same
 * ladder as kcache_get_program, so a miss compiles (within `deadline_ms`) and
 * the program is built in `context` on the way. */
KCACHE_API kcache_status kcache_get_binary(kcache_cache* cache, cl_context context,
                                           cl_device_id device, const char* kernel,
                                           const char* params, uint32_t deadline_ms,
                                           kcache_mode mode, unsigned char** out, size_t* size);

/* Counters of this process plus the store's sizes. Extensible like
 * kcache_info: set `struct_size` (KCACHE_STATS_INIT). */
typedef struct kcache_stats {
    size_t struct_size;
    uint64_t entries, raw_bytes, stored_bytes, evictions, corruptions;
    uint64_t in_process_hits, store_hits, pack_hits, aot_hits, failure_hits;
    uint64_t jit_compiles, jit_failures;
    uint64_t remote_hits, remote_misses, remote_errors, remote_timeouts;
    uint64_t remote_corrupt, remote_uploads, remote_upload_failures;
    uint64_t resident_hits, programs_released;
    uint64_t warmed_later; /* JIT binaries replaced by their warmed build (CPU devices) */
} kcache_stats;
/* Every counter zero (listed, so that -Wmissing-field-initializers is quiet). */
#define KCACHE_STATS_INIT \
    { sizeof(kcache_stats), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }

/* Fills the fields of `*out` that fit in out->struct_size. */
KCACHE_API kcache_status kcache_get_stats(kcache_cache* cache, kcache_stats* out);

/* Releases every program `cache` keeps for `context` (call it before
 * releasing a context for good); `*dropped` (may be NULL) gets how many.
 * Programs the caller holds stay valid. */
KCACHE_API kcache_status kcache_forget_context(kcache_cache* cache, cl_context context,
                                               size_t* dropped);

/* The message of this thread's last failed call ("" after a success). */
KCACHE_API const char* kcache_last_error(void);
/* A constant name for `status` ("KCACHE_TIMEOUT"). */
KCACHE_API const char* kcache_status_name(kcache_status status);

typedef enum kcache_log_level { KCACHE_LOG_WARNING = 0, KCACHE_LOG_ERROR = 1 } kcache_log_level;

/* Receives kcache's diagnostics (a pack skipped, a damaged store moved
 * aside, …) from any thread; `message` is valid during the call only. */
typedef void (*kcache_log_handler)(kcache_log_level level, const char* message, void* user);

/* Routes kcache's diagnostics of the whole process to `handler` (called with
 * `user`); NULL restores the default, one line on stderr. */
KCACHE_API void kcache_set_log_handler(kcache_log_handler handler, void* user);

#ifdef __cplusplus
}
#endif

#endif /* KCACHE_KCACHE_H */
