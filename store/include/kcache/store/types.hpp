#pragma once
// Plain data exchanged with the store: policy, entries, misses, errors, stats
// and failure records. No behaviour lives here.

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kcache/store/key.hpp"

namespace kcache::store {

using Bytes = std::vector<std::uint8_t>;

// Milliseconds since the Unix epoch; every time the store records.
using TimeMs = std::int64_t;

// Whether a store may be written.
enum class OpenMode { read_write, read_only };

// How each commit reaches the disk. Normal (WAL + synchronous=NORMAL) keeps
// every committed put across a process crash (the crash tests kill -9); Full
// also survives a power loss, at one fsync per put.
enum class Durability { normal, full };

// Tunables of a user store, with their defaults.
struct Policy {
    OpenMode mode = OpenMode::read_write;
    std::uint64_t max_bytes = 1ull << 30;  // stored (compressed) blob bytes kept; LRU beyond
    int zstd_level = 3;                    // 1..19; an entry zstd cannot shrink is kept raw
    // Huffman-code zstd's literals too. Off: device binaries are 2–12 % larger
    // but decode 1.3–2× faster, and decoding is on every store hit's path
    // (bench/cache/README.md, "Codec").
    bool zstd_compress_literals = false;
    int busy_timeout_ms = 5000;                // SQLite's own wait for a lock, per attempt
    int busy_retries = 8;                      // further attempts after SQLITE_BUSY, backing off
    int retry_backoff_ms = 10;                 // first backoff; doubles each retry (with jitter)
    TimeMs last_use_granularity_ms = 60'000;   // hits are written back at most this often
    TimeMs failure_base_ttl_ms = 10 * 60'000;  // first failure record lives this long…
    TimeMs failure_max_ttl_ms = 7 * 24 * 3'600'000ll;  // …doubling per repeat up to this
    Durability durability = Durability::normal;
    // Hot copies: entries' raw bytes in files of their own beside the
    // database, at most this many bytes (oldest removed first), so that a
    // process's first hit reads one file instead of opening SQLite
    // (get_hot). 0: none written.
    std::uint64_t max_hot_bytes = 64ull << 20;
    // Opens SQLite only when something first needs it, when a previous
    // writable open stamped this store file: open() then costs a few file
    // checks, and hot copies answer hits meanwhile.
    bool defer_open = false;
    // The clock, replaceable for tests of expiry; default: system clock.
    std::function<TimeMs()> clock;
};

// Returns the current time from `policy.clock` or the system clock.
TimeMs now_ms(const Policy& policy);

// Error of a store operation that is not a lookup miss.
enum class StoreErrc {
    invalid_argument,  // bad input (e.g. a pack path that already exists)
    unsafe_directory,  // cache directory owned by another user or writable by others
    read_only,         // the store was opened read-only (by request or necessity)
    schema_too_new,    // the file was written by a newer kcache; left untouched
    schema_too_old,    // a read-only pack of an older schema (cannot be migrated in place)
    foreign,           // an SQLite file without kcache's schema (empty or another program's)
    corrupt,           // the database file is damaged and could not be replaced
    too_large,         // one entry larger than the whole size bound
    busy,              // the database stayed locked through every retry
    io,                // any other SQLite, file-system or signing failure
};

struct StoreError {
    StoreErrc code;
    std::string message;  // names the path and, where there is one, the fix
};

// Why a lookup found nothing usable.
enum class MissReason {
    not_found,  // no entry under the key
    corrupt,    // checksum mismatch or bad compressed frame: quarantined
    collision,  // an entry under the key whose stored fields differ (SHA-256 collision)
    io_error,   // SQLite or file-system failure while reading
    busy,       // the database stayed locked through every retry
};
inline constexpr std::size_t kMissReasonCount = 5;

// Returns a stable lower-case name ("not_found", "corrupt", …).
const char* to_string(MissReason reason);

struct Miss {
    MissReason reason;
    std::string detail;
};

enum class Origin { jit = 0, aot = 1, imported = 2 };
enum class Verification { unverified = 0, passed = 1, failed = 2 };
enum class Codec { none = 0, zstd = 1 };

// Where an entry's bytes came from.
struct Provenance {
    std::string producer_version;  // the kcache (or tool) version that wrote it
    Origin origin = Origin::jit;
    TimeMs build_time_ms = 0;  // how long the compile took
    std::string build_log;
};

// Everything stored about an entry except its bytes.
struct EntryInfo {
    Key key;
    KeyFields fields;  // as stored (normalized)
    Provenance provenance;
    Codec codec = Codec::none;
    std::uint64_t raw_size = 0;
    std::uint64_t stored_size = 0;
    TimeMs created_ms = 0;
    TimeMs last_use_ms = 0;
    std::uint64_t hit_count = 0;
    Verification verification = Verification::unverified;
    TimeMs verified_at_ms = 0;
};

// A hit: the raw, checksum-verified bytes plus what is known about them.
struct Entry {
    EntryInfo info;
    Bytes bytes;
};

// What put() did.
enum class PutOutcome { stored, already_present };

// What a put does when the key already has an entry.
enum class PutMode {
    keep_existing,  // keep it (PutOutcome::already_present)
    replace,        // replace it in the same transaction (a better binary for the same key)
};

struct PutResult {
    Key key;
    PutOutcome outcome;
    std::uint64_t evicted = 0;  // entries evicted to respect the size bound
};

// An entry near a requested key, for `kcache explain`.
struct NearEntry {
    EntryInfo info;
    std::vector<std::string> differing;  // names of the hashed fields that differ
};

// Kinds of remembered compile failures.
enum class FailureKind { timeout = 0, crash = 1, build_error = 2, rejected_binary = 3 };

// Returns a stable lower-case name ("timeout", "crash", …).
const char* to_string(FailureKind kind);

struct FailureRecord {
    Key key;
    FailureKind kind;
    std::string detail;
    std::uint64_t count = 0;
    TimeMs first_seen_ms = 0;
    TimeMs last_seen_ms = 0;
    TimeMs expires_ms = 0;
    // The time budget of the request that failed (0: unknown). A timeout
    // record holds back only requests whose budget is not larger.
    TimeMs budget_ms = 0;
};

// Counters of one tier (the user store or one pack).
struct TierStats {
    std::string name;  // "user" or the pack's path
    std::uint64_t hits = 0;
    std::array<std::uint64_t, kMissReasonCount> misses{};  // indexed by MissReason

    std::uint64_t misses_for(MissReason r) const { return misses[static_cast<std::size_t>(r)]; }
};

struct Stats {
    std::vector<TierStats> tiers;
    std::uint64_t entries = 0;
    std::uint64_t raw_bytes = 0;
    std::uint64_t stored_bytes = 0;
    std::uint64_t evictions = 0;
    std::uint64_t corruptions = 0;  // entries quarantined since the store was created
};

// What gc() should remove.
struct GcOptions {
    std::optional<TimeMs> unused_for_ms;     // entries not used for at least this long
    std::optional<std::uint64_t> max_bytes;  // then LRU down to this many stored bytes
};

struct GcReport {
    std::uint64_t removed = 0;
    std::uint64_t freed_bytes = 0;  // stored bytes of the removed entries
};

struct ImportReport {
    std::uint64_t imported = 0;
    std::uint64_t already_present = 0;
    std::uint64_t corrupt = 0;   // skipped: checksum or frame did not verify
    std::uint64_t rejected = 0;  // skipped: sound, but refused by import_pack's `accept`
};

}  // namespace kcache::store
