// Store::Impl helpers: lazy write-back of hits, counters, quarantine, eviction.

#include "kcache/common/log.hpp"
#include "store_impl.hpp"

namespace kcache::store {

std::string miss_counter_name(MissReason reason) {
    return std::string("miss.") + to_string(reason);
}

const char* to_string(MissReason reason) {
    switch (reason) {
        case MissReason::not_found:
            return "not_found";
        case MissReason::corrupt:
            return "corrupt";
        case MissReason::collision:
            return "collision";
        case MissReason::io_error:
            return "io_error";
        case MissReason::busy:
            return "busy";
    }
    return "unknown";
}

Status<StoreError> Store::Impl::require_writable() const {
    if (mode == OpenMode::read_only) {
        return fail(StoreError{StoreErrc::read_only,
                               db_path.string() + " is open read-only; nothing can be written"});
    }
    return Ok{};
}

Status<StoreError> Store::Impl::ensure_writable_locked() {
    if (auto open = ensure_open_locked(); !open.ok()) {
        return open;
    }
    return require_writable();
}

void Store::Impl::count_miss(MissReason reason) {
    ++pending.misses[static_cast<std::size_t>(reason)];
}

void Store::Impl::count_hit(const std::string& key_hex) {
    ++pending.hits;
    const TimeMs t = now();
    Touch& touch = touches[key_hex];
    touch.last_use = t;
    ++touch.hits;
    if (t - last_flush_ms >= policy.last_use_granularity_ms) {
        // A busy database only delays the write-back to a later hit.
        (void)flush_locked();
    }
}

sql::Stat Store::Impl::add_counter(std::string_view name, std::int64_t delta) {
    if (delta == 0) {
        return Ok{};
    }
    auto stmt = db.cached(
        "INSERT INTO counters(name, value) VALUES (?, ?) "
        "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value");
    if (!stmt.ok()) {
        return fail(stmt.error());
    }
    auto st = stmt.value()->bind_all(name, delta);
    return st.ok() ? stmt.value()->run() : st;
}

sql::Stat Store::Impl::write_pending() {
    if (auto st = confirm_hot_locked(); !st.ok()) {
        return st;
    }
    for (const auto& [key_hex, touch] : touches) {
        auto stmt = db.cached(
            "UPDATE entries SET last_use_ms = max(last_use_ms, ?), hit_count = hit_count + ? "
            "WHERE key = ?");
        if (!stmt.ok()) {
            return fail(stmt.error());
        }
        auto st = stmt.value()->bind_all(touch.last_use, touch.hits, key_hex);
        if (st.ok()) {
            st = stmt.value()->run();
        }
        if (!st.ok()) {
            return st;
        }
    }
    auto st = add_counter(kCounterHits, static_cast<std::int64_t>(pending.hits));
    for (std::size_t r = 0; st.ok() && r < kMissReasonCount; ++r) {
        st = add_counter(miss_counter_name(static_cast<MissReason>(r)),
                         static_cast<std::int64_t>(pending.misses[r]));
    }
    return st;
}

bool Store::Impl::nothing_to_write_back() const {
    return touches.empty() && unconfirmed.empty() && to_promote.empty() && pending.hits == 0 &&
           std::all_of(pending.misses.begin(), pending.misses.end(),
                       [](std::uint64_t n) { return n == 0; });
}

sql::Stat Store::Impl::flush_locked() {
    last_flush_ms = now();
    if (mode == OpenMode::read_only) {
        return Ok{};  // counters of a read-only store live only in this process
    }
    if (nothing_to_write_back()) {
        return Ok{};
    }
    if (auto open = ensure_open_locked(); !open.ok()) {
        return fail(sql::SqlError{SQLITE_CANTOPEN, open.error().message});
    }
    auto done = sql::with_retry(retry, [&]() -> sql::Res<Ok> {
        auto txn = sql::Transaction::begin(db);
        if (!txn.ok()) {
            return fail(txn.error());
        }
        if (auto st = write_pending(); !st.ok()) {
            return st;
        }
        promote_locked();
        return txn->commit();
    });
    if (done.ok()) {
        touches.clear();
        pending = TierStats{"user", 0, {}};
        to_promote.clear();
    }
    return done;
}

void Store::Impl::quarantine(const std::string& key_hex, const std::vector<std::uint8_t>& checksum,
                             const std::string& why) {
    const std::string what =
        "corrupt entry " + key_hex + " in " + db_path.string() + " (" + why + ")";
    if (mode == OpenMode::read_only) {
        ++unpersisted_corruptions;  // cannot be removed: it stays a miss
        logging::warning(what + ": not removed by this read-only handle");
        return;
    }
    auto done = sql::with_retry(retry, [&]() -> sql::Res<std::int64_t> {
        auto txn = sql::Transaction::begin(db);
        if (!txn.ok()) {
            return fail(txn.error());
        }
        // Only this damaged version: a concurrent re-put of the key must survive.
        auto stmt = db.cached("DELETE FROM entries WHERE key = ? AND checksum = ?");
        if (!stmt.ok()) {
            return fail(stmt.error());
        }
        auto st = stmt.value()->bind_all(key_hex, std::span<const std::uint8_t>(checksum));
        if (st.ok()) {
            st = stmt.value()->run();
        }
        const std::int64_t removed = st.ok() ? db.changes() : 0;
        if (st.ok() && removed > 0) {
            st = add_counter(kCounterCorruptions, 1);
        }
        if (st.ok()) {
            st = txn->commit();
        }
        if (!st.ok()) {
            return fail(st.error());
        }
        return removed;
    });
    if (!done.ok()) {
        logging::error(what + ": could not be removed: " + done.error().message);
    } else {
        logging::warning(what + (done.value() > 0 ? ": quarantined (removed; the next request "
                                                    "rebuilds it)"
                                                  : ": already replaced by another process"));
    }
}

sql::Res<std::uint64_t> Store::Impl::evict_to(std::uint64_t bound, const std::string& keep) {
    std::uint64_t evicted = 0;
    for (;;) {
        auto total = db.query_int("SELECT stored_bytes FROM totals WHERE id = 1");
        if (!total.ok()) {
            return fail(total.error());
        }
        if (static_cast<std::uint64_t>(total.value()) <= bound) {
            break;
        }
        auto stmt = db.cached(
            "DELETE FROM entries WHERE id IN (SELECT id FROM entries WHERE key != ? "
            "ORDER BY last_use_ms, id LIMIT 1)");
        if (!stmt.ok()) {
            return fail(stmt.error());
        }
        auto st = stmt.value()->bind_all(keep);
        if (st.ok()) {
            st = stmt.value()->run();
        }
        if (!st.ok()) {
            return fail(st.error());
        }
        if (db.changes() == 0) {
            break;  // only `keep` is left
        }
        ++evicted;
    }
    if (auto st = add_counter(kCounterEvictions, static_cast<std::int64_t>(evicted)); !st.ok()) {
        return fail(st.error());
    }
    return evicted;
}

}  // namespace kcache::store
