// Store maintenance: remove, verification, listing, explain, gc, stats.

#include <algorithm>

#include "entry_row.hpp"
#include "store_impl.hpp"

namespace kcache::store {
namespace {

// Lock held: every entry's metadata, least recently used first.
Result<std::vector<EntryInfo>, StoreError> list_locked(Store::Impl& s) {
    return read_all<EntryInfo>(s, rows::kSelectAllInfo, [](const sql::Stmt& row) {
        return std::optional<EntryInfo>(rows::read_info(row));
    });
}

}  // namespace

Result<bool, StoreError> Store::remove(const Key& key) {
    std::lock_guard lock(impl_->mu);
    if (auto open = impl_->ensure_open_locked(); !open.ok()) {
        return fail(open.error());
    }
    auto n = write_one(*impl_, rows::kDeleteEntryByKey, key.hex());
    if (!n.ok()) {
        return fail(n.error());
    }
    impl_->touches.erase(key.hex());
    return n.value() > 0;
}

Result<bool, StoreError> Store::set_verified(const Key& key, Verification result) {
    std::lock_guard lock(impl_->mu);
    if (auto open = impl_->ensure_open_locked(); !open.ok()) {
        return fail(open.error());
    }
    auto n =
        write_one(*impl_, "UPDATE entries SET verification = ?, verified_at_ms = ? WHERE key = ?",
                  static_cast<int>(result), impl_->now(), key.hex());
    if (!n.ok()) {
        return fail(n.error());
    }
    return n.value() > 0;
}

Result<std::vector<EntryInfo>, StoreError> Store::list() {
    std::lock_guard lock(impl_->mu);
    if (auto open = impl_->ensure_open_locked(); !open.ok()) {
        return fail(open.error());
    }
    return list_locked(*impl_);
}

Result<std::optional<EntryInfo>, StoreError> Store::info(const Key& key) {
    std::lock_guard lock(impl_->mu);
    if (auto open = impl_->ensure_open_locked(); !open.ok()) {
        return fail(open.error());
    }
    auto done = sql::with_retry(impl_->retry, [&]() -> sql::Res<std::optional<EntryInfo>> {
        auto stmt = impl_->db.cached(rows::kSelectInfoByKey);
        if (!stmt.ok()) {
            return fail(stmt.error());
        }
        if (auto st = stmt.value()->bind(1, key.hex()); !st.ok()) {
            return fail(st.error());
        }
        auto row = stmt.value()->step();
        if (!row.ok()) {
            return fail(row.error());
        }
        return row.value() ? std::optional(rows::read_info(*stmt.value())) : std::nullopt;
    });
    if (!done.ok()) {
        return fail(impl_->error(done.error()));
    }
    return std::move(done).value();
}

Result<std::vector<NearEntry>, StoreError> Store::nearest(const KeyFields& fields,
                                                          std::size_t limit) {
    std::lock_guard lock(impl_->mu);
    if (auto open = impl_->ensure_open_locked(); !open.ok()) {
        return fail(open.error());
    }
    auto all = list_locked(*impl_);
    if (!all.ok()) {
        return fail(all.error());
    }
    std::vector<NearEntry> near;
    for (auto& info : all.value()) {
        auto diff = differing_fields(info.fields, fields);
        near.push_back(NearEntry{std::move(info), std::move(diff)});
    }
    std::stable_sort(near.begin(), near.end(), [](const NearEntry& a, const NearEntry& b) {
        return a.differing.size() < b.differing.size();
    });
    if (near.size() > limit) {
        near.resize(limit);
    }
    return near;
}

namespace {

// gc's deletions and the counts around them, in one write transaction from
// the first count to the last: another process's put cannot land between
// them, so the difference is exactly what this gc removed while other
// processes keep writing.
sql::Res<GcReport> gc_transaction(Store::Impl& s, const GcOptions& options) {
    auto txn = sql::Transaction::begin(s.db);
    if (!txn.ok()) {
        return fail(txn.error());
    }
    auto before_bytes = s.db.query_int("SELECT stored_bytes FROM totals WHERE id = 1");
    auto before_count = s.db.query_int("SELECT entries FROM totals WHERE id = 1");
    if (!before_bytes.ok() || !before_count.ok()) {
        return fail(before_bytes.ok() ? before_count.error() : before_bytes.error());
    }
    if (options.unused_for_ms) {
        auto stmt = s.db.cached("DELETE FROM entries WHERE last_use_ms < ?");
        if (!stmt.ok()) {
            return fail(stmt.error());
        }
        auto st = stmt.value()->bind_all(s.now() - *options.unused_for_ms);
        if (st.ok()) {
            st = stmt.value()->run();
        }
        if (!st.ok()) {
            return fail(st.error());
        }
    }
    if (options.max_bytes) {
        if (auto n = s.evict_to(*options.max_bytes, std::string()); !n.ok()) {
            return fail(n.error());
        }
    }
    auto after_bytes = s.db.query_int("SELECT stored_bytes FROM totals WHERE id = 1");
    auto after_count = s.db.query_int("SELECT entries FROM totals WHERE id = 1");
    if (!after_bytes.ok() || !after_count.ok()) {
        return fail(after_bytes.ok() ? after_count.error() : after_bytes.error());
    }
    if (auto c = txn->commit(); !c.ok()) {
        return fail(c.error());
    }
    auto gone = [](std::int64_t before, std::int64_t after) {
        return static_cast<std::uint64_t>(std::max<std::int64_t>(before - after, 0));
    };
    return GcReport{gone(before_count.value(), after_count.value()),
                    gone(before_bytes.value(), after_bytes.value())};
}

}  // namespace

Result<GcReport, StoreError> Store::gc(const GcOptions& options) {
    std::lock_guard lock(impl_->mu);
    if (auto w = impl_->ensure_writable_locked(); !w.ok()) {
        return fail(w.error());
    }
    Impl& s = *impl_;
    if (auto st = s.flush_locked(); !st.ok()) {  // so LRU order reflects recent hits
        return fail(s.error(st.error()));
    }
    auto done = sql::with_retry(s.retry, [&] { return gc_transaction(s, options); });
    if (!done.ok()) {
        return fail(s.error(done.error()));
    }
    // Returns free pages to the file system; failure only leaves the file larger.
    (void)s.db.exec("PRAGMA incremental_vacuum");
    return done.value();
}

Result<Stats, StoreError> Store::stats() {
    std::lock_guard lock(impl_->mu);
    if (auto open = impl_->ensure_open_locked(); !open.ok()) {
        return fail(open.error());
    }
    Impl& s = *impl_;
    Stats out;
    TierStats user = s.pending;
    auto done = sql::with_retry(s.retry, [&]() -> sql::Res<Ok> {
        auto totals = s.db.cached("SELECT entries, raw_bytes, stored_bytes FROM totals");
        if (!totals.ok()) {
            return fail(totals.error());
        }
        auto row = totals.value()->step();
        if (!row.ok()) {
            return fail(row.error());
        }
        if (row.value()) {
            out.entries = static_cast<std::uint64_t>(totals.value()->int64(0));
            out.raw_bytes = static_cast<std::uint64_t>(totals.value()->int64(1));
            out.stored_bytes = static_cast<std::uint64_t>(totals.value()->int64(2));
        }
        auto counters = s.db.cached("SELECT name, value FROM counters");
        if (!counters.ok()) {
            return fail(counters.error());
        }
        for (;;) {
            auto c = counters.value()->step();
            if (!c.ok()) {
                return fail(c.error());
            }
            if (!c.value()) {
                return Ok{};
            }
            const std::string name = counters.value()->text(0);
            const auto value = static_cast<std::uint64_t>(counters.value()->int64(1));
            if (name == kCounterHits) {
                user.hits += value;
            } else if (name == kCounterEvictions) {
                out.evictions = value;
            } else if (name == kCounterCorruptions) {
                out.corruptions = value;
            }
            for (std::size_t r = 0; r < kMissReasonCount; ++r) {
                if (name == miss_counter_name(static_cast<MissReason>(r))) {
                    user.misses[r] += value;
                }
            }
        }
    });
    if (!done.ok()) {
        return fail(s.error(done.error()));
    }
    out.corruptions += s.unpersisted_corruptions;
    out.tiers.push_back(user);
    return out;
}

}  // namespace kcache::store
