#pragma once
// Store's private state, shared by the files that implement its methods.

#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>

#include "hot/hot_copies.hpp"
#include "kcache/store/codec.hpp"
#include "kcache/store/store.hpp"
#include "schema.hpp"
#include "sqlite.hpp"

namespace kcache::store {

struct Store::Impl {
    std::filesystem::path dir;
    std::filesystem::path db_path;
    Policy policy;
    OpenMode mode = OpenMode::read_write;
    sql::Db db;
    sql::RetryPolicy retry;
    std::mutex mu;  // guards everything below and the connection

    // Hits not yet written back: key hex → (latest use, hit count).
    struct Touch {
        TimeMs last_use = 0;
        std::uint64_t hits = 0;
    };
    std::unordered_map<std::string, Touch> touches;
    TierStats pending;                          // counters not yet written back
    std::uint64_t unpersisted_corruptions = 0;  // seen while read-only
    TimeMs last_flush_ms = 0;
    // Hot copies of this store file (hot_copies.hpp); empty: none read or written.
    std::filesystem::path hot_dir;
    hot::Secret hot_secret{};          // tags the copies of hot_dir
    std::set<std::string> to_promote;  // key hex of entries hit in SQLite, for hot copies
    hot::Tally hot_tally;
    // Key hex → the checksum of the bytes of copies that answered before
    // the connection opened (none: the copy failed its check), compared with
    // their entries' at the next write-back, where a copy unbacked, damaged
    // or of other bytes is removed. The copy was checked whole when read, so
    // the write-back does not read it again.
    std::unordered_map<std::string, std::optional<Checksum>> unconfirmed;
    // Store::open_in_background(): the thread opening the deferred
    // connection, and what it opened, read once it is joined. The thread
    // touches nothing else of the Impl.
    std::thread opening;
    std::optional<Result<sql::Db, StoreError>> opened_early;

    Impl(std::filesystem::path d, std::filesystem::path p, Policy pol, OpenMode m, sql::Db database)
        : dir(std::move(d)),
          db_path(std::move(p)),
          policy(std::move(pol)),
          mode(m),
          db(std::move(database)),
          retry{policy.busy_retries, policy.retry_backoff_ms} {}
    ~Impl() {
        if (opening.joinable()) {
            opening.join();
        }
    }
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;

    TimeMs now() const { return now_ms(policy); }
    StoreError error(const sql::SqlError& e) const { return schema::to_store_error(e, db_path); }
    Status<StoreError> require_writable() const;

    // store_open.cpp. Lock held: opens the connection that Policy::defer_open
    // put off (no-op when open); every method but get_hot() needs it.
    Status<StoreError> ensure_open_locked();
    // Takes the lock: ensure_open_locked().
    Status<StoreError> ensure_open();
    // Lock held: ensure_open_locked(), then require_writable().
    Status<StoreError> ensure_writable_locked();
    // Right after the connection opens: sets up hot copies (writable stores)
    // and the TEMP trigger that removes an entry's copy with the entry, then
    // takes in and writes back what earlier processes handed over.
    Status<StoreError> attach_hot_copies();
    // store.cpp. Lock held, inside a write transaction: writes the hot copy
    // of `info` (just stored or hit) when copies are kept and the entry is
    // trusted without a check (trusted_without_check).
    void keep_hot(const EntryInfo& info, std::span<const std::uint8_t> raw,
                  const Checksum& checksum);
    // Lock held, inside a write transaction: writes the hot copies of
    // `to_promote` (best effort: a copy that cannot be made is left out).
    void promote_locked();
    // store_hot.cpp. Lock held, inside a write transaction: removes the
    // copies of `unconfirmed` whose entry is gone or holds other bytes, and
    // clears it.
    sql::Stat confirm_hot_locked();
    // Lock held, connection open, outside a transaction: removes the copy of
    // `key_hex` in `copies` unless it holds its entry's bytes (its key record
    // `serialized`; empty: kept unread while the entry exists), decided under
    // the write lock; a read-only handle removes it at once.
    void drop_unbacked_copy_locked(const std::filesystem::path& copies, const std::string& key_hex,
                                   std::string_view serialized);

    // store_hot.cpp. Lock held, at the close: when the connection never
    // opened, writes the pending write-back to a file beside the hot copies
    // for the next open to take in (hot/handover.hpp) and clears it; false
    // when it did not (a connection open or opening, no hot copies, too many
    // files waiting, a failed write): then flush_locked() writes it.
    bool hand_over_locked();
    // Lock held, right after a writable connection opened
    // (attach_hot_copies): adds the
    // write-backs handed over by earlier processes to this one's pending
    // state; whether there were any.
    bool take_handovers_locked();

    // Lock held. Counts a miss; records a hit and flushes when the last
    // write-back is older than the granularity.
    void count_miss(MissReason reason);
    void count_hit(const std::string& key_hex);
    // Lock held, inside an open transaction: writes pending touches and counters.
    sql::Stat write_pending();
    // Lock held: whether no hit, counter, copy to check or copy to make waits
    // to be written back.
    bool nothing_to_write_back() const;
    // Lock held: writes pending state in its own transaction (no-op when read-only).
    sql::Stat flush_locked();
    // Lock held: removes a corrupt entry (only if its checksum is still
    // `checksum`), counts it, logs `why`.
    void quarantine(const std::string& key_hex, const std::vector<std::uint8_t>& checksum,
                    const std::string& why);
    // Lock held, inside a transaction: deletes least recently used entries
    // (never `keep`) until stored bytes ≤ `bound`; returns how many.
    sql::Res<std::uint64_t> evict_to(std::uint64_t bound, const std::string& keep);
    // Lock held: adds `delta` to the persisted counter `name` (inside a transaction).
    sql::Stat add_counter(std::string_view name, std::int64_t delta);
};

// Lock held: runs `sql` with `args` in one write transaction; returns changes().
template <class... A>
Result<std::int64_t, StoreError> write_one(Store::Impl& s, const char* sql, const A&... args) {
    if (auto w = s.require_writable(); !w.ok()) {
        return fail(w.error());
    }
    auto done = sql::with_retry(s.retry, [&]() -> sql::Res<std::int64_t> {
        auto txn = sql::Transaction::begin(s.db);
        if (!txn.ok()) {
            return fail(txn.error());
        }
        auto stmt = s.db.cached(sql);
        if (!stmt.ok()) {
            return fail(stmt.error());
        }
        auto st = stmt.value()->bind_all(args...);
        if (st.ok()) {
            st = stmt.value()->run();
        }
        const std::int64_t changed = s.db.changes();
        if (st.ok()) {
            st = txn->commit();
        }
        if (!st.ok()) {
            return fail(st.error());
        }
        return changed;
    });
    if (!done.ok()) {
        return fail(s.error(done.error()));
    }
    return done.value();
}

// Lock held: runs the parameterless query `sql` and returns `read(stmt)` of
// every row; `read` returns an optional to skip a row.
template <class T, class Read>
Result<std::vector<T>, StoreError> read_all(Store::Impl& s, const char* sql, Read read) {
    auto done = sql::with_retry(s.retry, [&]() -> sql::Res<std::vector<T>> {
        auto stmt = s.db.cached(sql);
        if (!stmt.ok()) {
            return fail(stmt.error());
        }
        std::vector<T> out;
        for (;;) {
            auto row = stmt.value()->step();
            if (!row.ok()) {
                return fail(row.error());
            }
            if (!row.value()) {
                return out;
            }
            if (std::optional<T> item = read(*stmt.value())) {
                out.push_back(std::move(*item));
            }
        }
    });
    if (!done.ok()) {
        return fail(s.error(done.error()));
    }
    return std::move(done).value();
}

// Names of persisted counters.
inline constexpr const char* kCounterHits = "hits";
inline constexpr const char* kCounterEvictions = "evictions";
inline constexpr const char* kCounterCorruptions = "corruptions";
// Returns "miss.<reason>".
std::string miss_counter_name(MissReason reason);

}  // namespace kcache::store
