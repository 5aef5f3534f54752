/* kcache C API for operator libraries. Every function returns a status and
 * never aborts or lets an exception escape; kcache_last_error() gives the
 * message of the calling thread's last failure. Thread-safe.
 *
 * It grows the way SQLite's does: new functions, new enumerators at the end,
 * new fields at the end of the structs that start with `struct_size`. The
 * caller sets `struct_size` to the size of the struct it was compiled with
 * (the *_INIT macros do); kcache reads and writes only the fields that fit,
 * gives fields past a short struct their default, and refuses
 * (KCACHE_STATUS_INVALID_ARGUMENT) a longer struct whose fields unknown to
 * it are not all zero. Memory kcache allocates is freed with kcache_free(). */
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
    KCACHE_STATUS_OK = 0,
    KCACHE_STATUS_NOT_CACHED = 1,
    KCACHE_STATUS_NOT_READY = 2,
    KCACHE_STATUS_TIMEOUT = 3,
    KCACHE_STATUS_CRASHED = 4,
    KCACHE_STATUS_BUILD_ERROR = 5,
    KCACHE_STATUS_UNSUPPORTED = 6,
    KCACHE_STATUS_UNKNOWN_KERNEL = 7,
    KCACHE_STATUS_INVALID_ARGUMENT = 8,
    KCACHE_STATUS_DISABLED = 9,
    KCACHE_STATUS_DEVICE_ERROR = 10,
    KCACHE_STATUS_STORE_ERROR = 11,
    KCACHE_STATUS_CONFIG_ERROR = 12,
    KCACHE_STATUS_INTERNAL_ERROR = 13,
    /* The driver canary found this driver computing wrong answers for the
     * variant (KCACHE_CANARY=enforce): take the fallback path. Counted by
     * index ("requests.none.driver_suspect"), not in the frozen
     * kcache_stats.requests (KCACHE_STATUS_COUNT keeps its value). */
    KCACHE_STATUS_DRIVER_SUSPECT = 14
} kcache_status;
/* The names of 0.2, kept as aliases. */
#define KCACHE_OK KCACHE_STATUS_OK
#define KCACHE_NOT_CACHED KCACHE_STATUS_NOT_CACHED
#define KCACHE_NOT_READY KCACHE_STATUS_NOT_READY
#define KCACHE_TIMEOUT KCACHE_STATUS_TIMEOUT
#define KCACHE_CRASHED KCACHE_STATUS_CRASHED
#define KCACHE_BUILD_ERROR KCACHE_STATUS_BUILD_ERROR
#define KCACHE_UNSUPPORTED KCACHE_STATUS_UNSUPPORTED
#define KCACHE_UNKNOWN_KERNEL KCACHE_STATUS_UNKNOWN_KERNEL
#define KCACHE_INVALID_ARGUMENT KCACHE_STATUS_INVALID_ARGUMENT
#define KCACHE_DISABLED KCACHE_STATUS_DISABLED
#define KCACHE_DEVICE_ERROR KCACHE_STATUS_DEVICE_ERROR
#define KCACHE_STORE_ERROR KCACHE_STATUS_STORE_ERROR
#define KCACHE_CONFIG_ERROR KCACHE_STATUS_CONFIG_ERROR
#define KCACHE_INTERNAL_ERROR KCACHE_STATUS_INTERNAL_ERROR

typedef enum kcache_mode {
    KCACHE_MODE_BLOCKING = 0,
    KCACHE_MODE_FAIL_FAST = 1,
    KCACHE_MODE_BACKGROUND = 2
} kcache_mode;

/* Which step of the ladder answered (or was the last tried). The ladder, top
 * to bottom: IN_PROCESS (then the bytes this process already loaded,
 * reported under the tier that holds them), USER_STORE (hot copy, then
 * SQLite), PACK, REMOTE, AOT, FAILURE_RECORD, JIT. The values are the ABI's
 * and do not follow that order: new rungs are appended. */
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

/* KCACHE_SIZED_INIT_(type): a `type` with `struct_size` set and every other
 * field zero, for the *_INIT macros. C gets a constant initializer; C++
 * (where an initializer that skips members warns) a call of
 * kcache_sized_init_ (end of this header). */
#ifdef __cplusplus
#define KCACHE_SIZED_INIT_(type) (::kcache_sized_init_<type>())
#else
#define KCACHE_SIZED_INIT_(type) \
    { .struct_size = sizeof(type) }
#endif

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
#ifdef __cplusplus
#define KCACHE_INFO_INIT (::kcache_info_init_())
#else
#define KCACHE_INFO_INIT \
    { .struct_size = sizeof(kcache_info), .rung = KCACHE_RUNG_NONE }
#endif

/* Returns the library's version ("0.2.0"); compare with KCACHE_VERSION_STRING
 * to detect a header/library mismatch. */
KCACHE_API const char* kcache_version(void);

/* Opens the cache configured by the environment / config file / defaults. */
KCACHE_API kcache_status kcache_open(kcache_cache** out);
/* Closes `cache` (NULL is ignored); waits briefly for background compiles. */
KCACHE_API void kcache_close(kcache_cache* cache);

/* The entry points of 0.2, kept for the ABI and deprecated (a call warns):
 * each is kcache_get_kernel_program, kcache_get_source_program or
 * kcache_get_kernel_binary, which new code calls, with a request of its parameters.
 *
 * A built program for registry kernel `kernel` (name or alias) with variant
 * parameters `params` ("dtype=f16,act=relu"; NULL or "" for defaults).
 * `deadline_ms` 0 means the configured default. On KCACHE_OK `*out` holds a
 * program reference the caller releases with clReleaseProgram. `info` may be
 * NULL; otherwise its `struct_size` must be set (KCACHE_INVALID_ARGUMENT if 0). */
KCACHE_API KCACHE_DEPRECATED("kcache_get_kernel_program") kcache_status
    kcache_get_program(kcache_cache* cache, cl_context context, cl_device_id device,
                       const char* kernel, const char* params, uint32_t deadline_ms,
                       kcache_mode mode, cl_program* out, kcache_info* info);

/* The same for the caller's own kernel: `source`, build `options` (may be
 * NULL), `entry_points` (`n_entry_points` names; 0 for all). */
KCACHE_API KCACHE_DEPRECATED("kcache_get_source_program") kcache_status
    kcache_get_program_source(kcache_cache* cache, cl_context context, cl_device_id device,
                              const char* source, const char* options,
                              const char* const* entry_points, size_t n_entry_points,
                              uint32_t deadline_ms, kcache_mode mode, cl_program* out,
                              kcache_info* info);

/* Binary bytes for a registry kernel, `*size` of them at `*out`, freed with
 * kcache_free() (or free()); kcache_get_program's ladder (a miss compiles). */
KCACHE_API KCACHE_DEPRECATED("kcache_get_kernel_binary") kcache_status
    kcache_get_binary(kcache_cache* cache, cl_context context, cl_device_id device,
                      const char* kernel, const char* params, uint32_t deadline_ms,
                      kcache_mode mode, unsigned char** out, size_t* size);

/* A request for a registry kernel (KCACHE_KERNEL_REQUEST_INIT, then set `kernel`). */
typedef struct kcache_kernel_request {
    size_t struct_size;
    const char* kernel;   /* name or alias; required */
    const char* params;   /* variant parameters "dtype=f16,act=relu"; NULL or "" for defaults */
    uint32_t deadline_ms; /* 0: the configured default */
    kcache_mode mode;
} kcache_kernel_request;
#define KCACHE_KERNEL_REQUEST_INIT KCACHE_SIZED_INIT_(kcache_kernel_request)

/* A known-answer test's reference (kcache_source_request.kat_reference),
 * called in the caller's process with the KAT file's `n_args` arguments:
 * `inputs[i]` holds `input_counts[i]` values (a scalar's value, a buffer's
 * "in" list; 0 for __local and an output without "in"); for each output
 * argument `expected[i]` has room for `expected_counts[i]` values, filled in
 * with the file's "expected" list (zeros where it says "reference"); NULL
 * with a count of 0 for the others. i32 and u32 values come as floats.
 * Returns 0 when it filled them in, non-zero when it cannot (the request then
 * fails with KCACHE_STATUS_INVALID_ARGUMENT). */
typedef int (*kcache_kat_reference)(void* user, size_t n_args, const float* const* inputs,
                                    const size_t* input_counts, float* const* expected,
                                    const size_t* expected_counts);

/* A request for the caller's own kernel (KCACHE_SOURCE_REQUEST_INIT, then `source`). */
typedef struct kcache_source_request {
    size_t struct_size;
    const char* source;              /* OpenCL C; required */
    const char* options;             /* build options; NULL for none */
    const char* const* entry_points; /* `n_entry_points` names; 0 for all kernels */
    size_t n_entry_points;
    uint32_t deadline_ms; /* 0: the configured default */
    kcache_mode mode;
    const char* name; /* descriptive only (messages); never part of the key; may be NULL */
    /* >0: on a CPU device, launch once with this local size so that the
     * stored binary loads ready to run. */
    size_t warmup_local_size;
    /* Appended (an older caller's smaller struct_size leaves them NULL): the
     * kernel's own known-answer test, a KAT file (docs/canary-kat.md: inputs,
     * expected outputs, tolerance) run once per driver on the binary kcache
     * would serve, in kcache-verify under the watchdog, before it is served;
     * its verdict is kept with the driver canary's (<store>/canary/). A
     * failing, hanging or crashing test is a suspect verdict:
     * KCACHE_STATUS_DRIVER_SUSPECT under KCACHE_CANARY=enforce, a logged
     * warning under warn; off runs none. A KAT file that cannot be read or
     * parsed fails the request (KCACHE_STATUS_INVALID_ARGUMENT). NULL: none. */
    const char* kat_path;
    /* Optional: computes the KAT's expected outputs in the caller's process
     * (kcache_kat_reference), called with `kat_reference_user`; NULL: the
     * file's "expected" lists. */
    kcache_kat_reference kat_reference;
    void* kat_reference_user;
    /* Appended: a link instead of a build of `source` (0 units: none):
     * `n_link_units` programs, each compiled from `link_sources[i]` with
     * `link_options[i]` (NULL for none), then linked with `options` (the
     * link's; `-create-library` is refused). The key holds `source`, every
     * unit's source and options, and the link's options. */
    const char* const* link_sources;
    const char* const* link_options;
    size_t n_link_units;
    /* Each unit's input headers (clCompileProgram's; NULL counts: none):
     * `link_header_counts[i]` for unit i, their names (relative paths, as
     * the unit's #include names them) and sources one unit after another in
     * `link_header_names` and `link_header_sources`. The key holds them by
     * name and content. */
    const size_t* link_header_counts;
    const char* const* link_header_names;
    const char* const* link_header_sources;
    /* Appended: a SPIR-V module (IL) to build instead of `source`, `il_size`
     * bytes (0: none): its 20-byte header at least, whole 32-bit words,
     * SPIR-V's magic number little-endian first. kcache-jit builds it with
     * clCreateProgramWithIL and clBuildProgram with `options`; the key holds
     * the SHA-256 of its bytes as it holds a source's text. `source` is then
     * not read (it may be NULL). Not with link units. */
    const void* il;
    size_t il_size;
} kcache_source_request;
#define KCACHE_SOURCE_REQUEST_INIT KCACHE_SIZED_INIT_(kcache_source_request)

/* A built program for `request` on `device` in `context`. On
 * KCACHE_STATUS_OK `*out` holds a program reference the caller releases with
 * clReleaseProgram; otherwise `*out` is NULL. `info` may be NULL. */
KCACHE_API kcache_status kcache_get_kernel_program(kcache_cache* cache, cl_context context,
                                                   cl_device_id device,
                                                   const kcache_kernel_request* request,
                                                   cl_program* out, kcache_info* info);
/* The same for the caller's own kernel. */
KCACHE_API kcache_status kcache_get_source_program(kcache_cache* cache, cl_context context,
                                                   cl_device_id device,
                                                   const kcache_source_request* request,
                                                   cl_program* out, kcache_info* info);
/* The binary bytes of the program kcache_get_kernel_program answers (same
 * ladder: a miss compiles, and the program is built in `context` on the
 * way). On KCACHE_STATUS_OK `*out` holds `*size` bytes the caller frees with
 * kcache_free(); otherwise `*out` is NULL and `*size` 0. `info` may be NULL. */
KCACHE_API kcache_status kcache_get_kernel_binary(kcache_cache* cache, cl_context context,
                                                  cl_device_id device,
                                                  const kcache_kernel_request* request,
                                                  unsigned char** out, size_t* size,
                                                  kcache_info* info);

/* Frees memory kcache allocated and handed to the caller (binaries of
 * kcache_get_kernel_binary and kcache_get_binary); NULL is ignored. */
KCACHE_API void kcache_free(void* memory);

/* Latency histograms: the upper bounds of the buckets in nanoseconds (steps
 * of 1, 2.5, 5 from 250 ns to 100 s); a last bucket counts the rest. */
/* clang-format off */
#define KCACHE_LATENCY_BOUNDS_NS                                                              \
    { 250ull, 500ull, 1000ull, 2500ull, 5000ull, 10000ull, 25000ull, 50000ull, 100000ull,       \
      250000ull, 500000ull, 1000000ull, 2500000ull, 5000000ull, 10000000ull, 25000000ull,        \
      50000000ull, 100000000ull, 250000000ull, 500000000ull, 1000000000ull, 2500000000ull,       \
      5000000000ull, 10000000000ull, 25000000000ull, 50000000000ull, 100000000000ull }
/* clang-format on */
#define KCACHE_LATENCY_BUCKETS 28 /* the 27 bounds and the rest */
#define KCACHE_RUNG_COUNT 8
#define KCACHE_STATUS_COUNT 14 /* the statuses before KCACHE_STATUS_DRIVER_SUSPECT */

/* Durations: how many, their total, and how many fell in each bucket
 * (buckets[i]: at most bound i and above bound i-1; not cumulative). */
typedef struct kcache_histogram {
    uint64_t count;
    uint64_t sum_ns;
    uint64_t buckets[KCACHE_LATENCY_BUCKETS];
} kcache_histogram;

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
    uint64_t warmed_later;         /* JIT binaries replaced by their warmed build (CPU devices) */
    uint64_t store_write_failures; /* writes to the user store that failed */
    /* The process's metrics, recorded by its caches that keep them
     * (KCACHE_METRICS, on by default): latency histograms with fixed buckets
     * (KCACHE_LATENCY_BOUNDS_NS) and request counts; see kcache_histogram. */
    kcache_histogram request_latency;                     /* every request, call to answer */
    kcache_histogram answered_latency[KCACHE_RUNG_COUNT]; /* by the rung that answered */
    kcache_histogram compile_latency;                     /* compiles in the helper, once each */
    kcache_histogram load_latency;                        /* the driver's loads of binaries */
    kcache_histogram remote_get_latency, remote_put_latency;
    uint64_t requests[KCACHE_RUNG_COUNT][KCACHE_STATUS_COUNT]; /* [kcache_rung][kcache_status] */
} kcache_stats;
/* Every counter zero, `struct_size` set. */
#define KCACHE_STATS_INIT KCACHE_SIZED_INIT_(kcache_stats)

/* Fills the fields of `*out` that fit in out->struct_size. A frozen view:
 * counters added after it (driver_suspect answers, new counters and rungs)
 * are read by index below. */
KCACHE_API kcache_status kcache_get_stats(kcache_cache* cache, kcache_stats* out);

/* The counters by index: every value of kcache_stats and those added after
 * it, each under a constant name: a counter's ("store_hits"), a request
 * count by rung and status ("requests.user_store.ok",
 * "requests.none.driver_suspect") or a histogram's ("latency.load.count",
 * "latency.load.sum_ns", "latency.load.bucket.3"). A name keeps its meaning
 * across versions; an index holds within one library only (new counters,
 * statuses and rungs take new indices), so look the names up once:
 *
 *   for (size_t i = 0; i < kcache_stat_count(); ++i)
 *       if (strcmp(kcache_stat_name(i), "store_hits") == 0) hits_index = i;
 *
 * How many there are. */
KCACHE_API size_t kcache_stat_count(void);
/* The name of counter `index`; NULL at or past kcache_stat_count(). */
KCACHE_API const char* kcache_stat_name(size_t index);
/* Reads the counters of `cache` at one instant into values[0, capacity)
 * (index order; values may be NULL when capacity is 0); `*count` (may be
 * NULL) gets how many there are, whatever the capacity. */
KCACHE_API kcache_status kcache_stat_values(kcache_cache* cache, uint64_t* values, size_t capacity,
                                            size_t* count);

/* Releases every program `cache` keeps for `context` (call it before
 * releasing a context for good); `*dropped` (may be NULL) gets how many.
 * Programs the caller holds stay valid. */
KCACHE_API kcache_status kcache_forget_context(kcache_cache* cache, cl_context context,
                                               size_t* dropped);

/* Learns now what requests of `device` need of it (identity, quirks, key
 * fields: about 20 driver queries), so that its first request does not: e.g.
 * on a thread of the caller's own after it creates a context. */
KCACHE_API kcache_status kcache_prepare_device(kcache_cache* cache, cl_device_id device);

/* The message of this thread's last failed call ("" after a success). */
KCACHE_API const char* kcache_last_error(void);
/* A constant name for `status`: its 0.2 name ("KCACHE_TIMEOUT", an alias of
 * KCACHE_STATUS_TIMEOUT), unchanged so that callers that print or compare it
 * keep working; "KCACHE_UNKNOWN" for a value that is not a status. */
KCACHE_API const char* kcache_status_name(kcache_status status);

/* How much a diagnostic matters: an error (something failed), a warning
 * (something the user may need to act on), info (what went well: a driver
 * canary that validated), debug. A handler set by kcache_set_log_handler or
 * _v2 gets warnings and errors only; kcache_set_log_handler_v3 says how much
 * more it wants. */
typedef enum kcache_log_level {
    KCACHE_LOG_WARNING = 0,
    KCACHE_LOG_ERROR = 1,
    KCACHE_LOG_INFO = 2,
    KCACHE_LOG_DEBUG = 3
} kcache_log_level;

/* Receives kcache's diagnostics (a pack skipped, a damaged store moved
 * aside, …) from any thread; `message` is valid during the call only. */
typedef void (*kcache_log_handler)(kcache_log_level level, const char* message, void* user);

/* Routes kcache's warnings and errors of the whole process to `handler`
 * (called with `user`); NULL restores the default, one line on stderr for
 * each message up to KCACHE_LOG_LEVEL (default warning). */
KCACHE_API void kcache_set_log_handler(kcache_log_handler handler, void* user);

/* Program calls a driver does not survive at once. Where the device data
 * says so for a device in this process (its serialize_loads rule: PoCL with
 * its kernel cache off aborts when one thread releases a program while
 * another loads a binary), kcache makes its loads of binaries and its
 * releases of programs one at a time. A caller that releases programs
 * kcache answered (possibly their last reference) from several threads, or
 * loads binaries itself, brackets each such call with begin and end: they
 * then wait for kcache's, and kcache's for them. Recursive; nothing while
 * no such device was seen. A forked child's are its own. */
KCACHE_API void kcache_program_calls_begin(void);
KCACHE_API void kcache_program_calls_end(void);

#ifdef __cplusplus
}

/* The *_INIT macros in C++: value-initialized (every field zero), then sized. */
template <class T>
inline T kcache_sized_init_() {
    T v = T();
    v.struct_size = sizeof(T);
    return v;
}
inline kcache_info kcache_info_init_() {
    kcache_info v = kcache_sized_init_<kcache_info>();
    v.rung = KCACHE_RUNG_NONE;
    return v;
}
#endif

/* The opaque configuration and outcome, and the entry points that use them. */
#include "kcache/kcache_objects.h"

#endif /* KCACHE_KCACHE_H */
