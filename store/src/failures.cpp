// Failure records: a compile that timed out, crashed, failed or produced a
// binary the driver rejected is remembered, so the next request for the same
// key answers at once instead of failing slowly again. The record expires
// after a TTL that doubles with each repeat; a new driver is a new key.

#include <algorithm>

#include "store_impl.hpp"

namespace kcache::store {
namespace {

// A timeout record holds back a request only when the request's budget
// (?5) is not larger than the one the timeout happened under; 0 is unknown.
constexpr const char* kSelectFailure =
    "SELECT kind, detail, count, first_seen_ms, last_seen_ms, expires_ms, budget_ms "
    "FROM failures WHERE key = ?1 AND (?2 < 0 OR kind = ?2) AND expires_ms > ?3 "
    "AND NOT (kind = 0 AND ?4 > budget_ms) ORDER BY last_seen_ms DESC LIMIT 1";

constexpr const char* kSelectAllFailures =
    "SELECT kind, detail, count, first_seen_ms, last_seen_ms, expires_ms, budget_ms, key "
    "FROM failures ORDER BY last_seen_ms DESC";

FailureRecord read_failure(const sql::Stmt& s, const Key& key) {
    FailureRecord r{key,        static_cast<FailureKind>(s.int64(0)),
                    s.text(1),  static_cast<std::uint64_t>(s.int64(2)),
                    s.int64(3), s.int64(4),
                    s.int64(5)};
    r.budget_ms = s.int64(6);
    return r;
}

// Lock held: the freshest record for `key` (of `kind`, or any when kind < 0)
// not yet expired at `now` that holds back a request of `budget_ms`.
sql::Res<std::optional<FailureRecord>> find_locked(Store::Impl& s, const Key& key, int kind,
                                                   TimeMs now, TimeMs budget_ms) {
    auto stmt = s.db.cached(kSelectFailure);
    if (!stmt.ok()) {
        return fail(stmt.error());
    }
    if (auto st = stmt.value()->bind_all(key.hex(), kind, now, budget_ms); !st.ok()) {
        return fail(st.error());
    }
    auto row = stmt.value()->step();
    if (!row.ok()) {
        return fail(row.error());
    }
    return row.value() ? std::optional(read_failure(*stmt.value(), key)) : std::nullopt;
}

}  // namespace

const char* to_string(FailureKind kind) {
    switch (kind) {
        case FailureKind::timeout:
            return "timeout";
        case FailureKind::crash:
            return "crash";
        case FailureKind::build_error:
            return "build_error";
        case FailureKind::rejected_binary:
            return "rejected_binary";
    }
    return "unknown";
}

Result<FailureRecord, StoreError> Store::record_failure(const Key& key, FailureKind kind,
                                                        std::string_view detail, TimeMs budget_ms) {
    std::lock_guard lock(impl_->mu);
    if (auto w = impl_->ensure_writable_locked(); !w.ok()) {
        return fail(w.error());
    }
    Impl& s = *impl_;
    const TimeMs now = s.now();
    const TimeMs base = std::max<TimeMs>(1, s.policy.failure_base_ttl_ms);
    const TimeMs cap = std::max(base, s.policy.failure_max_ttl_ms);
    // ttl = base · 2^(count − 1), capped; computed in SQL so the upsert stays one statement.
    auto done = sql::with_retry(s.retry, [&]() -> sql::Res<FailureRecord> {
        auto txn = sql::Transaction::begin(s.db);
        if (!txn.ok()) {
            return fail(txn.error());
        }
        auto stmt = s.db.cached(
            "INSERT INTO failures(key, kind, detail, count, first_seen_ms, last_seen_ms, "
            "expires_ms, budget_ms) VALUES (?1, ?2, ?3, 1, ?4, ?4, ?4 + ?5, ?7) "
            "ON CONFLICT(key, kind) DO UPDATE SET detail = ?3, count = count + 1, "
            "last_seen_ms = ?4, expires_ms = ?4 + min(?6, ?5 << min(count, 30)), budget_ms = ?7");
        if (!stmt.ok()) {
            return fail(stmt.error());
        }
        auto st = stmt.value()->bind_all(key.hex(), static_cast<int>(kind), detail, now, base, cap,
                                         std::max<TimeMs>(0, budget_ms));
        if (st.ok()) {
            st = stmt.value()->run();
        }
        if (!st.ok()) {
            return fail(st.error());
        }
        auto rec = find_locked(s, key, static_cast<int>(kind), now, 0);
        if (!rec.ok()) {
            return fail(rec.error());
        }
        if (auto c = txn->commit(); !c.ok()) {
            return fail(c.error());
        }
        return rec.value().value_or(
            FailureRecord{key, kind, std::string(detail), 1, now, now, now, budget_ms});
    });
    if (!done.ok()) {
        return fail(s.error(done.error()));
    }
    return std::move(done).value();
}

Result<std::optional<FailureRecord>, StoreError> Store::find_fresh_failure(const Key& key,
                                                                           TimeMs budget_ms) {
    std::lock_guard lock(impl_->mu);
    if (auto open = impl_->ensure_open_locked(); !open.ok()) {
        return fail(open.error());
    }
    auto done = sql::with_retry(
        impl_->retry, [&] { return find_locked(*impl_, key, -1, impl_->now(), budget_ms); });
    if (!done.ok()) {
        return fail(impl_->error(done.error()));
    }
    return std::move(done).value();
}

Result<std::uint64_t, StoreError> Store::clear_failures(const Key& key) {
    std::lock_guard lock(impl_->mu);
    if (auto open = impl_->ensure_open_locked(); !open.ok()) {
        return fail(open.error());
    }
    auto n = write_one(*impl_, "DELETE FROM failures WHERE key = ?", key.hex());
    if (!n.ok()) {
        return fail(n.error());
    }
    return static_cast<std::uint64_t>(n.value());
}

Result<std::uint64_t, StoreError> Store::clear_all_failures() {
    std::lock_guard lock(impl_->mu);
    if (auto open = impl_->ensure_open_locked(); !open.ok()) {
        return fail(open.error());
    }
    auto n = write_one(*impl_, "DELETE FROM failures WHERE ? = 1", 1);
    if (!n.ok()) {
        return fail(n.error());
    }
    return static_cast<std::uint64_t>(n.value());
}

Result<std::vector<FailureRecord>, StoreError> Store::list_failures() {
    std::lock_guard lock(impl_->mu);
    if (auto open = impl_->ensure_open_locked(); !open.ok()) {
        return fail(open.error());
    }
    return read_all<FailureRecord>(*impl_, kSelectAllFailures,
                                   [](const sql::Stmt& row) -> std::optional<FailureRecord> {
                                       Key key;
                                       if (!key.parse_hex(row.text(7))) {
                                           return std::nullopt;
                                       }
                                       return read_failure(row, key);
                                   });
}

}  // namespace kcache::store
