#pragma once
// The types of kcache's C++ API (include <kcache/kcache.hpp>): enumerations,
// Config, Outcome, the requests, Binary and CacheStats, plain structs shared
// by the public header-only layer and the library's own code. None of them
// crosses libkcache.so's boundary: the library exports only the C API, so a
// new field here is no ABI break.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kcache {

// How long a request may wait for a compile.
enum class Mode {
    blocking,    // look up, then compile (shared with concurrent callers) up to the deadline
    fail_fast,   // never compile: not_cached at once when nothing is stored
    background,  // not_ready at once on a miss; a compile starts so a later call hits
};

// Which step of the ladder answered (or was the last tried). The ladder,
// top to bottom: in_process (programs kept for the context; then the bytes
// this process already loaded, reported under the tier that holds them with
// Outcome::resident set), user_store (its hot copy, then SQLite), pack,
// remote, aot, failure_record, jit. The values are the ABI's and do not
// follow that order (remote came later): new rungs are appended.
enum class Rung {
    in_process,      // this process already built it for this context and device
    user_store,      // exact native binary from the user store
    pack,            // exact native binary from an installed/read-only pack
    aot,             // ahead-of-time binary for the device's target, from a pack
    failure_record,  // a fresh failure record: answered at once, no compile
    jit,             // compiled just in time in the helper process
    none,            // nothing answered (see status)
    remote,          // exact native binary from the shared remote tier (verified, backfilled)
};

enum class StatusCode {
    ok = 0,
    not_cached,        // fail_fast and nothing stored
    not_ready,         // background: a compile runs (or ran and failed); ask again
    timeout,           // the compile did not finish by the deadline (now or recorded)
    crashed,           // the driver's compiler crashed (now or recorded)
    build_error,       // the source did not build (log in message)
    unsupported,       // the device lacks what the variant needs; nothing compiled
    unknown_kernel,    // no kernel or alias of that name / bad variant parameter
    invalid_argument,  // null handle, device not in context, malformed request
    disabled,          // KCACHE_DISABLE is set: the caller should build itself
    device_error,      // an OpenCL call failed
    store_error,       // the store could not be opened or written
    config_error,      // a malformed configuration value
    internal_error,
    // The driver canary found this driver computing wrong answers for the
    // variant (KCACHE_CANARY=enforce): take the fallback path. Counted in
    // CacheStats::requests and the counters by index, not in the frozen
    // kcache_stats, whose layout predates it.
    driver_suspect,
};

// Why a rung did not answer.
enum class MissCause {
    not_in_process,      // not built in this process for this context and device
    not_found,           // the tier has no entry under the key
    corrupt,             // the entry failed its checksum: quarantined, rebuilt
    collision,           // an entry under the key with other fields (hash collision)
    io_error,            // the tier could not be read
    busy,                // the store stayed locked through every retry
    not_verified,        // quirk verify_before_use: the entry is not verified
    rejected_by_driver,  // the driver refused the stored binary
    answered_below,      // a lower tier of the same rung had it (user store → pack)
    no_aot_target,       // the device has no AOT target in the device database
    target_not_covered,  // the packs record the AOT target as not buildable
    skipped,             // the rung was skipped (quirk, configuration or policy)
    no_failure_record,   // no fresh failure record: compiling is allowed
    other,               // see the detail text
    not_stored,          // produced, but writing it to the user store failed (detail says why)
};

// One rung that did not answer, and why.
struct RungMiss {
    Rung rung = Rung::none;
    MissCause cause = MissCause::other;
    std::string detail;  // for people: names the file, pack or driver message

    RungMiss() = default;
    RungMiss(Rung r, MissCause c, std::string d) : rung(r), cause(c), detail(std::move(d)) {}
};

// Where an effective configuration value came from.
enum class Source { default_value, environment, config_file, api };  // api: kcache_config_set

// How much a diagnostic matters (kcache_log_level): error, warning (the user
// may need to act), info (what went well), debug.
enum class LogLevel { warning, error, info, debug };

// Receives kcache's diagnostics (a pack skipped, a damaged store moved aside,
// …) from any thread.
using LogHandler = std::function<void(LogLevel, std::string_view)>;

// What a request for a registry kernel does about the driver canary (the
// known-answer tests run once per driver before its binaries are served);
// a SourceRequest with a KAT (SourceRequest::kat) follows it too.
enum class CanaryPolicy {
    off,      // no canary runs
    warn,     // a variant the canary found suspect is served, with a logged warning
    enforce,  // a variant the canary found suspect is answered StatusCode::driver_suspect
};

// Effective configuration. Resolved from KCACHE_* environment variables,
// then the config file ($KCACHE_CONFIG, else $XDG_CONFIG_HOME/kcache/config,
// lines `key = value`), then defaults.
struct Config {
    std::filesystem::path dir;                       // KCACHE_DIR
    std::uint64_t max_bytes = 1ull << 30;            // KCACHE_MAX_SIZE (bytes; K/M/G suffix)
    std::chrono::milliseconds jit_timeout{120'000};  // KCACHE_JIT_TIMEOUT_MS: default deadline
    bool disabled = false;                           // KCACHE_DISABLE (1/true/yes/on)
    bool read_only = false;                          // KCACHE_READONLY
    std::vector<std::filesystem::path> packs;        // KCACHE_PACKS (':'-separated files/dirs)
    std::string jit_helper;                          // KCACHE_JIT_PATH (kcache-jit)
    // KCACHE_JIT_HELPERS: persistent kcache-jit helpers per device (compiles of
    // one device running at once); 0: a fresh helper per compile.
    std::size_t jit_helpers = 4;
    // KCACHE_JIT_IDLE_MS: a persistent helper idle this long exits.
    std::chrono::milliseconds jit_idle{30'000};
    // KCACHE_DEVICE_DB: a device-data file layered over the built-in device
    // database (empty: the built-in data alone).
    std::filesystem::path device_db;
    // TMPDIR (config file: tmpdir): where kcache makes its scratch directories
    // (ocloc's work directories, prebuild's store); an empty TMPDIR is /tmp.
    std::filesystem::path tmpdir = "/tmp";
    // The shared remote tier (docs/remote.md); off when `remote_urls` is empty.
    std::vector<std::string> remote_urls;            // KCACHE_REMOTE: base URLs separated by spaces
    bool remote_read_only = false;                   // KCACHE_REMOTE_READONLY: never send PUT
    std::chrono::milliseconds remote_timeout{3000};  // KCACHE_REMOTE_TIMEOUT_MS: one request
    std::chrono::milliseconds remote_connect_timeout{1000};  // KCACHE_REMOTE_CONNECT_TIMEOUT_MS
    std::filesystem::path remote_token_file;  // KCACHE_REMOTE_TOKEN_FILE: bearer token
    // KCACHE_REMOTE_TOKEN_COMMAND: a shell command printing the bearer token
    // (not with remote_token_file), its answer kept KCACHE_REMOTE_TOKEN_LIFETIME.
    std::string remote_token_command;
    std::chrono::milliseconds remote_token_lifetime{300'000};
    bool remote_netrc = false;        // KCACHE_REMOTE_NETRC: credentials from ~/.netrc
    std::filesystem::path remote_ca;  // KCACHE_REMOTE_CA: CA file (default: system CAs)
    bool remote_required = false;     // KCACHE_REMOTE_REQUIRED: remote errors are errors
    std::chrono::milliseconds remote_breaker_window{30'000};  // KCACHE_REMOTE_BREAKER_MS
    bool remote_allow_http_token = false;  // KCACHE_REMOTE_ALLOW_HTTP_TOKEN: token over http
    // KCACHE_REMOTE_REQUIRE_SIGNED: use only remote objects signed by a
    // trusted key (the trust sources of packs, below); on by default.
    bool remote_require_signed = true;
    // KCACHE_REMOTE_SIGNING_KEY: minisign secret key (`kcache keygen`) that
    // signs uploads (push, warm, the JIT upload queue); empty: none.
    std::filesystem::path remote_signing_key;
    // KCACHE_REMOTE_TTL: Redis objects expire this long after their upload;
    // 0: never (other backends ignore it).
    std::chrono::milliseconds remote_ttl{0};
    // KCACHE_REMOTE_NAMESPACE: namespaces, comma-separated ("team-a,platform"):
    // uploads go to the first, reads try each in order, each namespace
    // trusting only the keys of its own trusted.d/namespaces/<name>/; empty:
    // the default layout (docs/remote.md, "Namespaces").
    std::string remote_namespace;
    // S3 (s3://bucket/prefix among `remote_urls`; docs/remote.md, "S3"):
    // KCACHE_REMOTE_S3_ENDPOINT: http(s)://host[:port]; empty: AWS's, by region.
    std::string remote_s3_endpoint;
    // KCACHE_REMOTE_S3_REGION; empty: AWS_REGION, AWS_DEFAULT_REGION, else us-east-1.
    std::string remote_s3_region;
    // KCACHE_REMOTE_S3_URL_STYLE: "path" or "virtual" (bucket in the host
    // name); empty: virtual on AWS's endpoint, path on another.
    std::string remote_s3_url_style;
    // KCACHE_REMOTE_S3_CREDENTIALS_FILE: an AWS credentials file used before
    // the environment; empty: AWS_ACCESS_KEY_ID…, then ~/.aws/credentials.
    std::filesystem::path remote_s3_credentials_file;
    std::string remote_s3_profile;  // KCACHE_REMOTE_S3_PROFILE; empty: AWS_PROFILE, else default
    // Observability (docs/design.md, "Metrics and trace"). KCACHE_METRICS:
    // the process's latency histograms and request counts (CacheStats) are
    // kept (on by default).
    bool metrics = true;
    // KCACHE_METRICS_FILE: the process writes its metrics in the Prometheus
    // text format to this file (replaced atomically) every
    // `metrics_interval` and at exit; "%p" is replaced by the process id.
    std::filesystem::path metrics_file;
    std::chrono::milliseconds metrics_interval{15'000};  // KCACHE_METRICS_INTERVAL_MS
    // KCACHE_TRACE: a file that receives one Chrome trace event record per
    // request (JSON, shared by the processes that name it), or "stderr" for
    // one line per request through the log sink; empty: off.
    std::string trace;
    std::uint64_t trace_max_bytes = 64ull << 20;  // KCACHE_TRACE_MAX_SIZE: no record past it
    // KCACHE_MAX_PROGRAMS: built programs kept per Cache for repeat hits, over
    // all contexts; the least recently used is released first (0: keep none).
    std::size_t max_programs = 1024;
    // KCACHE_MAX_RESIDENT_BYTES: decoded, checksum-verified binaries kept in
    // memory per Cache, so that a new context costs only the driver's load
    // (bytes; K/M/G suffix; 0: off).
    std::uint64_t max_resident_bytes = 64ull << 20;
    // KCACHE_MAX_HOT_BYTES: hot copies, the user store's entries also kept
    // raw in files of their own, so that a process's first hit reads one
    // file instead of opening SQLite; the oldest go first (bytes; K/M/G
    // suffix; 0: none written).
    std::uint64_t max_hot_bytes = 64ull << 20;
    // Signed packs: public keys (minisign .pub files) whose pack signatures
    // are trusted, read from every *.pub of `trusted_key_dirs` (load_config
    // sets /etc/kcache/trusted.d and $XDG_CONFIG_HOME/kcache/trusted.d) and
    // from `trusted_keys`; with `require_signed_packs` a pack without a valid
    // signature by one of them is not used (the outcome's misses say why).
    std::vector<std::filesystem::path> trusted_keys;      // KCACHE_TRUSTED_KEYS (':'-separated)
    std::vector<std::filesystem::path> trusted_key_dirs;  // not a setting: see above
    bool require_signed_packs = false;                    // KCACHE_REQUIRE_SIGNED_PACKS
    CanaryPolicy canary = CanaryPolicy::warn;             // KCACHE_CANARY: off, warn or enforce
    std::map<std::string, std::pair<std::string, Source>> origins;  // key → (value, source)
};

// Why each rung above the answering one missed, and how long things took.
struct Outcome {
    StatusCode status = StatusCode::internal_error;
    Rung rung = Rung::none;
    std::vector<RungMiss> misses;  // in ladder order
    std::string message;           // for people; build log on build_error
    std::string key;               // hex cache key ("" before it is known)
    std::chrono::microseconds total{0};
    std::chrono::microseconds compile{0};  // helper wall time when a JIT ran
    // The binary came from this process's memory (no store read, no decode);
    // `rung` still names the tier that holds it (user_store or pack; jit or
    // aot only when the user store is read-only).
    bool resident = false;
};

// A registry kernel: name or alias plus variant parameters ("dtype" → "f16").
struct KernelRequest {
    std::string kernel;
    std::map<std::string, std::string> params;
    std::optional<std::chrono::milliseconds> deadline;  // default: Config::jit_timeout
    Mode mode = Mode::blocking;
};

// A known-answer test's reference (SourceRequest::kat_reference), called in
// the caller's process with each KAT argument's input values (`inputs[i]`: a
// scalar's value, a buffer's "in" list; empty for __local and an output
// without "in"; i32 and u32 values as floats). Fills each output argument's
// expected values (`expected[i]` comes sized to the output's count, holding
// the file's "expected" list or zeros; empty for the other arguments; its
// sizes must stay). Returns false when it cannot (the request fails
// invalid_argument).
using KatReference = std::function<bool(const std::vector<std::vector<float>>& inputs,
                                        std::vector<std::vector<float>>& expected)>;

// One compiled program of a link (SourceRequest::link): its source, compile
// options and input headers (clCompileProgram's: name, source).
struct LinkUnit {
    std::string source;
    std::string options;
    std::vector<std::pair<std::string, std::string>> headers = {};
    bool operator==(const LinkUnit&) const = default;
};

// The `source` of a request for one program's compile alone, without the
// link clBuildProgram adds (the OpenCL layer's clCompileProgram of a program
// that calls a function another program defines: it compiles, but does not
// build, alone): `link` holds that one unit. The key holds this text, so the
// entry is apart from the unit's build and from every link; kcache-jit
// compiles the unit only, and the entry holds the compiled object's binary.
inline constexpr std::string_view kCompileOnlySource =
    "#error kcache: clCompileProgram alone, compiled from its unit and never from this text\n";
// Whether a request of `source` with `units` link units asks for a compile
// alone (kCompileOnlySource).
inline bool is_compile_only(std::string_view source, std::size_t units) noexcept {
    return units == 1 && source == kCompileOnlySource;
}

// Whether `bytes` is a SPIR-V module as SourceRequest::source may hold one:
// its 20-byte header at least, whole 32-bit words, SPIR-V's magic number
// little-endian first (no OpenCL C text starts so).
inline bool is_spirv_module(std::string_view bytes) noexcept {
    return bytes.size() >= 20 && bytes.size() % 4 == 0 && bytes.substr(0, 4) == "\x03\x02\x23\x07";
}

// The caller's own kernel, with the same ladder and watchdog.
struct SourceRequest {
    std::string name;  // descriptive only; never part of the key
    // OpenCL C, or a SPIR-V module (IL) that is_spirv_module() takes, built
    // with clCreateProgramWithIL (the OpenCL layer's programs from IL) and
    // keyed by the SHA-256 of its bytes as a text is (the C API's `il`).
    std::string source;
    std::string options;
    std::vector<std::string> entry_points;  // empty: all kernels of the program
    // >0: on a CPU device, launch once with this local size so that the
    // stored binary loads ready to run (with pooled helpers, after the
    // answer: the warmed binary replaces the stored one; stats().warmed_later)
    std::size_t warmup_local_size = 0;
    std::optional<std::chrono::milliseconds> deadline;
    Mode mode = Mode::blocking;
    // The kernel's own known-answer test (docs/canary-kat.md): a KAT file run
    // once per driver on the binary kcache would serve, before it is served,
    // under Config::canary as the registry kernels' canary is (enforce:
    // driver_suspect; warn: served, logged). Empty: none.
    std::filesystem::path kat;
    KatReference kat_reference;  // optional: computes the KAT's expected outputs
    // Not empty: a link instead of a build of `source` (as clCompileProgram
    // of each unit with its options, then clLinkProgram of them all with
    // `options`, the link's); the key holds `source`, every unit and the
    // link's options.
    std::vector<LinkUnit> link = {};
};

// Raw binary bytes for a request instead of a program.
struct Binary {
    std::vector<unsigned char> bytes;
    Outcome outcome;
};

// The upper bounds of every latency histogram's buckets, in nanoseconds
// (steps of 1, 2.5, 5 from 250 ns to 100 s); a last bucket counts the rest.
// clang-format off
inline constexpr std::array<std::uint64_t, 27> kLatencyBoundsNs = {
    250,           500,           1'000,          2'500,          5'000,
    10'000,        25'000,        50'000,         100'000,        250'000,
    500'000,       1'000'000,     2'500'000,      5'000'000,      10'000'000,
    25'000'000,    50'000'000,    100'000'000,    250'000'000,    500'000'000,
    1'000'000'000, 2'500'000'000, 5'000'000'000,  10'000'000'000, 25'000'000'000,
    50'000'000'000, 100'000'000'000};
// clang-format on
inline constexpr std::size_t kLatencyBuckets = kLatencyBoundsNs.size() + 1;
inline constexpr std::size_t kRungCount = 8;     // enumerators of Rung
inline constexpr std::size_t kStatusCount = 15;  // enumerators of StatusCode
// The statuses the frozen kcache_stats has a column of (those before
// driver_suspect); the counters by index have every status.
inline constexpr std::size_t kFrozenStatusCount = 14;

// The enumerators' names as traces, metrics, the CLI and the counters by
// index print them, indexed by value.
inline constexpr std::array<const char*, kRungCount> kRungNames = {
    "in_process", "user_store", "pack", "aot", "failure_record", "jit", "none", "remote"};
inline constexpr std::array<const char*, kStatusCount> kStatusNames = {
    "ok",           "not_cached",  "not_ready",      "timeout",          "crashed",
    "build_error",  "unsupported", "unknown_kernel", "invalid_argument", "disabled",
    "device_error", "store_error", "config_error",   "internal_error",   "driver_suspect"};

// Durations observed with fixed buckets (kLatencyBoundsNs).
struct LatencyHistogram {
    std::uint64_t count = 0;   // observations
    std::uint64_t sum_ns = 0;  // their total
    // Observations per bucket (not cumulative): buckets[i] counts those at
    // most kLatencyBoundsNs[i] and above the bound before; the last, the rest.
    std::array<std::uint64_t, kLatencyBuckets> buckets{};
};

struct CacheStats {
    // The counters, one per row of <kcache/kcache_counters.def> (each row
    // says what it counts): the user store's sizes, this cache's answers by
    // rung, its remote tier and the rest.
#define KCACHE_COUNTER(field, frozen, source, doc) std::uint64_t field = 0;
#include "kcache/kcache_counters.def"
#undef KCACHE_COUNTER
    // The process's metrics, recorded by every Cache of it that keeps them
    // (Config::metrics, on by default): request latency, first check to
    // answer, overall and by the rung that answered (index: Rung; a request
    // that failed counts under Rung::none); compiles in the helper (once per
    // compile, however many requests wait for it); the driver's loads of
    // binaries; remote downloads and uploads; and requests by rung and status.
    LatencyHistogram request;
    std::array<LatencyHistogram, kRungCount> answered;
    LatencyHistogram compile, load, remote_get, remote_put;
    // Requests by rung and status: requests[Rung][StatusCode].
    std::array<std::array<std::uint64_t, kStatusCount>, kRungCount> requests{};
};

// Calls `f(name, value)` for every value of `s` (a CacheStats, const or not)
// in the order of the counters by index (kcache_stat_name): the rows of
// <kcache/kcache_counters.def>; then "requests.<rung>.<status>"; then each
// histogram's "<name>.count", "<name>.sum_ns" and "<name>.bucket.<i>", for
// latency.request, latency.answered.<rung>, latency.compile, latency.load,
// latency.remote_get and latency.remote_put.
template <class S, class F>
void for_each_stat(S& s, F&& f) {
#define KCACHE_COUNTER(field, frozen, source, doc) f(std::string(#field), s.field);
#include "kcache/kcache_counters.def"
#undef KCACHE_COUNTER
    for (std::size_t r = 0; r < kRungCount; ++r) {
        for (std::size_t st = 0; st < kStatusCount; ++st) {
            f(std::string("requests.") + kRungNames[r] + "." + kStatusNames[st], s.requests[r][st]);
        }
    }
    const auto histogram = [&f](const std::string& name, auto& h) {
        f(name + ".count", h.count);
        f(name + ".sum_ns", h.sum_ns);
        for (std::size_t b = 0; b < kLatencyBuckets; ++b) {
            f(name + ".bucket." + std::to_string(b), h.buckets[b]);
        }
    };
    histogram("latency.request", s.request);
    for (std::size_t r = 0; r < kRungCount; ++r) {
        histogram(std::string("latency.answered.") + kRungNames[r], s.answered[r]);
    }
    histogram("latency.compile", s.compile);
    histogram("latency.load", s.load);
    histogram("latency.remote_get", s.remote_get);
    histogram("latency.remote_put", s.remote_put);
}

}  // namespace kcache
