/* kcache C API, part two (included by <kcache/kcache.h>; include that): the
 * opaque configuration and outcome objects, the requests that answer with an
 * outcome, drain, and the names of the enumerations. Together with kcache.h it
 * expresses the whole of the C++ API, which <kcache/kcache.hpp> implements
 * inline over these functions. Added in 0.3. */
#ifndef KCACHE_KCACHE_OBJECTS_H
#define KCACHE_KCACHE_OBJECTS_H

#include "kcache/kcache.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why a rung did not answer (the misses of a kcache_outcome). New causes are
 * appended. */
typedef enum kcache_miss_cause {
    KCACHE_MISS_NOT_IN_PROCESS = 0,      /* not built in this process for this context and device */
    KCACHE_MISS_NOT_FOUND = 1,           /* the tier has no entry under the key */
    KCACHE_MISS_CORRUPT = 2,             /* the entry failed its checksum: quarantined, rebuilt */
    KCACHE_MISS_COLLISION = 3,           /* an entry under the key with other fields */
    KCACHE_MISS_IO_ERROR = 4,            /* the tier could not be read */
    KCACHE_MISS_BUSY = 5,                /* the store stayed locked through every retry */
    KCACHE_MISS_NOT_VERIFIED = 6,        /* quirk verify_before_use: the entry is not verified */
    KCACHE_MISS_REJECTED_BY_DRIVER = 7,  /* the driver refused the stored binary */
    KCACHE_MISS_ANSWERED_BELOW = 8,      /* a lower tier of the same rung had it */
    KCACHE_MISS_NO_AOT_TARGET = 9,       /* the device has no AOT target in the device database */
    KCACHE_MISS_TARGET_NOT_COVERED = 10, /* the packs record the AOT target as not buildable */
    KCACHE_MISS_SKIPPED = 11,            /* skipped (quirk, configuration or policy) */
    KCACHE_MISS_NO_FAILURE_RECORD = 12,  /* no fresh failure record: compiling is allowed */
    KCACHE_MISS_OTHER = 13,              /* see the detail text */
    KCACHE_MISS_NOT_STORED = 14          /* produced, but writing it to the user store failed */
} kcache_miss_cause;

/* Where a setting's value came from. */
typedef enum kcache_source {
    KCACHE_SOURCE_DEFAULT = 0,
    KCACHE_SOURCE_ENVIRONMENT = 1,
    KCACHE_SOURCE_CONFIG_FILE = 2,
    KCACHE_SOURCE_API = 3 /* kcache_config_set */
} kcache_source;

/* The enumerations kcache_enum_name names. */
typedef enum kcache_enum {
    KCACHE_ENUM_STATUS = 0,
    KCACHE_ENUM_RUNG = 1,
    KCACHE_ENUM_MODE = 2,
    KCACHE_ENUM_MISS_CAUSE = 3,
    KCACHE_ENUM_SOURCE = 4
} kcache_enum;

/* The lower-case name of `value` of enumeration `which` ("ok", "user_store",
 * "fail_fast", "not_found", "environment", "api"); "unknown" for a value or
 * enumeration it does not know. The string is constant. */
KCACHE_API const char* kcache_enum_name(kcache_enum which, int value);

/* A configuration: every setting of the config file by its key there ("dir",
 * "max_size", "jit_timeout_ms", "remote", …; kcache_config_key lists them),
 * plus "trusted_key_dirs" (':'-separated directories of trusted *.pub keys),
 * which only this API sets. Not thread-safe: one thread at a time per object.
 * Freed with kcache_config_free. */
typedef struct kcache_config kcache_config;

/* Resolves the configuration as kcache_open does: KCACHE_* environment
 * variables, then the config file ($KCACHE_CONFIG, else
 * $XDG_CONFIG_HOME/kcache/config), then defaults. On failure `*out` is NULL
 * and kcache_last_error() names the variable or file:line
 * (KCACHE_STATUS_CONFIG_ERROR). */
KCACHE_API kcache_status kcache_config_load(kcache_config** out);
/* The defaults alone (no environment, no file; `dir` empty: set it before
 * opening a cache). */
KCACHE_API kcache_status kcache_config_new(kcache_config** out);
/* A copy of `config` (*out NULL on failure). */
KCACHE_API kcache_status kcache_config_copy(const kcache_config* config, kcache_config** out);
/* Frees `config` (NULL is ignored). */
KCACHE_API void kcache_config_free(kcache_config* config);

/* Sets `key` to `value`, parsed and checked as the config file's line
 * `key = value` is; its origin becomes KCACHE_SOURCE_API. An unknown key or a
 * malformed value is KCACHE_STATUS_CONFIG_ERROR and changes nothing. */
KCACHE_API kcache_status kcache_config_set(kcache_config* config, const char* key,
                                           const char* value);
/* The effective value of `key` as text that kcache_config_set takes back
 * unchanged (lists ':'- or space-separated as in the file, booleans 1 or 0,
 * sizes in bytes, durations in milliseconds: "250" for a *_ms key, "250ms"
 * otherwise). `*value` is freed with kcache_free(); NULL on failure. */
KCACHE_API kcache_status kcache_config_get(const kcache_config* config, const char* key,
                                           char** value);
/* Where the value of `key` came from, and its text as written there ("" for
 * a default); `written` may be NULL, else freed with kcache_free(). */
KCACHE_API kcache_status kcache_config_origin(const kcache_config* config, const char* key,
                                              kcache_source* source, char** written);
/* The key of setting `index` (0, 1, … in the config file's order), NULL past
 * the last. */
KCACHE_API const char* kcache_config_key(size_t index);

/* What a request did: the answer's status and rung, why each rung above it
 * missed, the message, the key and the timings. Freed with
 * kcache_outcome_free. The accessors take NULL (KCACHE_STATUS_INVALID_ARGUMENT,
 * KCACHE_RUNG_NONE, "", 0). */
typedef struct kcache_outcome kcache_outcome;

KCACHE_API kcache_status kcache_outcome_status(const kcache_outcome* outcome);
KCACHE_API kcache_rung kcache_outcome_rung(const kcache_outcome* outcome);
/* For people: the build log on KCACHE_STATUS_BUILD_ERROR. Valid until the
 * outcome is freed. */
KCACHE_API const char* kcache_outcome_message(const kcache_outcome* outcome);
/* The cache key in hex ("" before it is known). Valid until freed. */
KCACHE_API const char* kcache_outcome_key(const kcache_outcome* outcome);
/* Call to answer, and the helper's wall time when a JIT ran. */
KCACHE_API uint64_t kcache_outcome_total_us(const kcache_outcome* outcome);
KCACHE_API uint64_t kcache_outcome_compile_us(const kcache_outcome* outcome);
/* 1 when the binary came from this process's memory (no store read); the
 * rung still names the tier that holds it. */
KCACHE_API int kcache_outcome_resident(const kcache_outcome* outcome);
/* The rungs that missed, in ladder order. */
KCACHE_API size_t kcache_outcome_miss_count(const kcache_outcome* outcome);
/* Miss `index`: its rung, cause and detail (valid until the outcome is
 * freed); any output may be NULL. KCACHE_STATUS_INVALID_ARGUMENT past the
 * last. */
KCACHE_API kcache_status kcache_outcome_miss(const kcache_outcome* outcome, size_t index,
                                             kcache_rung* rung, kcache_miss_cause* cause,
                                             const char** detail);
/* Frees `outcome` (NULL is ignored). */
KCACHE_API void kcache_outcome_free(kcache_outcome* outcome);

/* Opens the cache `config` describes. `outcome` may be NULL; otherwise
 * `*outcome` receives the open's outcome (status and message; NULL only when
 * none could be made), freed with kcache_outcome_free, on success and
 * failure alike. */
KCACHE_API kcache_status kcache_open_config(const kcache_config* config, kcache_cache** out,
                                            kcache_outcome** outcome);
/* A copy of the configuration `cache` was opened with (free it with
 * kcache_config_free). */
KCACHE_API kcache_status kcache_cache_config(const kcache_cache* cache, kcache_config** out);

/* kcache_get_kernel_program, kcache_get_source_program and
 * kcache_get_kernel_binary with the whole outcome instead of a kcache_info.
 * `outcome` may be NULL; otherwise `*outcome` receives the request's outcome
 * (a refused argument's too; NULL only when none could be made), freed with
 * kcache_outcome_free. */
KCACHE_API kcache_status kcache_get_kernel_program_v2(kcache_cache* cache, cl_context context,
                                                      cl_device_id device,
                                                      const kcache_kernel_request* request,
                                                      cl_program* out, kcache_outcome** outcome);
KCACHE_API kcache_status kcache_get_source_program_v2(kcache_cache* cache, cl_context context,
                                                      cl_device_id device,
                                                      const kcache_source_request* request,
                                                      cl_program* out, kcache_outcome** outcome);
KCACHE_API kcache_status kcache_get_kernel_binary_v2(kcache_cache* cache, cl_context context,
                                                     cl_device_id device,
                                                     const kcache_kernel_request* request,
                                                     unsigned char** out, size_t* size,
                                                     kcache_outcome** outcome);

/* Waits for the background compiles `cache` started, the warm-ups after JIT
 * answers on CPU devices, then its queued remote uploads: at most `limit_ms`
 * in all. */
KCACHE_API kcache_status kcache_drain(kcache_cache* cache, uint64_t limit_ms);

/* kcache_set_log_handler, and `release` (may be NULL) is called with `user`
 * once kcache no longer calls `handler`: when another handler replaces it. */
KCACHE_API void kcache_set_log_handler_v2(kcache_log_handler handler, void* user,
                                          void (*release)(void* user));

/* kcache_set_log_handler_v2, and `handler` gets every message up to
 * `most_verbose` (KCACHE_LOG_ERROR: errors only; KCACHE_LOG_WARNING: what
 * _v2 gets; KCACHE_LOG_INFO, KCACHE_LOG_DEBUG: more). A value that is no
 * level is taken as KCACHE_LOG_WARNING. */
KCACHE_API void kcache_set_log_handler_v3(kcache_log_handler handler, void* user,
                                          void (*release)(void* user),
                                          kcache_log_level most_verbose);

#ifdef __cplusplus
}
#endif

#endif /* KCACHE_KCACHE_OBJECTS_H */
