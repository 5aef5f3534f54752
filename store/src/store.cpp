// Store::get and Store::put: the hot paths.

#include <optional>

#include "entry_row.hpp"
#include "hot/hot_copies.hpp"
#include "kcache/common/log.hpp"
#include "kcache/common/sha256.hpp"
#include "kcache/store/codec.hpp"
#include "store_impl.hpp"

namespace kcache::store {
namespace {

// One row as read under the lock; verified and decoded after releasing it,
// so that several threads of one process decompress in parallel.
struct StoredRow {
    EntryInfo info;
    std::vector<std::uint8_t> checksum;
    std::vector<std::uint8_t> blob;
};

// Lock held: reads the row under `key_hex` (with busy retries).
Result<StoredRow, Miss> fetch_locked(Store::Impl& s, const std::string& key_hex) {
    auto found = sql::with_retry(s.retry, [&]() -> sql::Res<std::optional<StoredRow>> {
        auto stmt = s.db.cached(rows::kSelectEntryByKey);
        if (!stmt.ok()) {
            return fail(stmt.error());
        }
        sql::StmtRef& q = stmt.value();
        auto bound = q->bind(1, key_hex);
        auto row = bound.ok() ? q->step() : sql::Res<bool>(fail(bound.error()));
        if (!row.ok()) {
            return fail(row.error());
        }
        if (!row.value()) {
            return std::optional<StoredRow>();
        }
        auto sum = q->blob(rows::kInfoColumns);
        auto blob = q->blob(rows::kInfoColumns + 1);
        return std::optional<StoredRow>(
            StoredRow{rows::read_info(*q), {sum.begin(), sum.end()}, {blob.begin(), blob.end()}});
    });
    if (!found.ok()) {
        const MissReason reason = found.error().corrupt() ? MissReason::corrupt
                                  : found.error().busy()  ? MissReason::busy
                                                          : MissReason::io_error;
        return fail(Miss{reason, s.error(found.error()).message});
    }
    if (!found.value()) {
        return fail(Miss{MissReason::not_found, {}});
    }
    return std::move(*found.value());
}

// Returns whether the stored (normalized) fields are those requested.
bool same_fields(const KeyFields& stored, const KeyFields& requested) {
    KeyFields want = normalized(requested);
    want.kernel_name = stored.kernel_name;  // descriptive only
    return want == stored;
}

Result<Entry, Miss> get_entry(Store::Impl& s, const Key& key, const KeyFields* requested) {
    const std::string key_hex = key.hex();
    if (auto open = s.ensure_open(); !open.ok()) {
        std::lock_guard lock(s.mu);
        const MissReason reason =
            open.error().code == StoreErrc::busy ? MissReason::busy : MissReason::io_error;
        s.count_miss(reason);
        return fail(Miss{reason, open.error().message});
    }
    Result<StoredRow, Miss> row = [&] {
        std::lock_guard lock(s.mu);
        return fetch_locked(s, key_hex);
    }();
    auto miss = [&](Miss m) -> Result<Entry, Miss> {
        std::lock_guard lock(s.mu);
        if (m.reason == MissReason::corrupt && row.ok()) {
            s.quarantine(key_hex, row->checksum, m.detail);
        }
        if (m.reason == MissReason::corrupt || m.reason == MissReason::not_found) {
            // A copy answers only for a sound entry, whatever the mode: a
            // read-only handle (kcache warm's check) must not leave one for
            // the next process to take.
            const std::filesystem::path copies =
                s.hot_dir.empty() ? hot::stamped_dir(s.dir, s.db_path) : s.hot_dir;
            if (hot::exists(copies, key_hex)) {
                s.drop_unbacked_copy_locked(copies, key_hex, {});
            }
        }
        s.count_miss(m.reason);
        return fail(std::move(m));
    };
    if (!row.ok()) {
        return miss(row.error());
    }
    if (requested != nullptr && !same_fields(row->info.fields, *requested)) {
        auto diff = differing_fields(row->info.fields, *requested);
        return miss(
            Miss{MissReason::collision, "key " + key_hex + " holds an entry whose " +
                                            (diff.empty() ? std::string("fields") : diff.front()) +
                                            " differ from the request (SHA-256 collision)"});
    }
    auto bytes = decode_verified(row->info.codec, row->blob, row->info.raw_size, row->checksum);
    if (!bytes.ok()) {
        return miss(Miss{MissReason::corrupt, bytes.error().message});
    }
    {
        std::lock_guard lock(s.mu);
        // Written with the next write-back: missing, or not yet checked
        // (then a damaged one is removed first, in the same transaction).
        if (s.policy.max_hot_bytes > 0 &&
            (!hot::exists(s.hot_dir, key_hex) || s.unconfirmed.count(key_hex) > 0)) {
            s.to_promote.insert(key_hex);
        }
        s.count_hit(key_hex);
    }
    return Entry{std::move(row->info), std::move(bytes).value()};
}

// Lock held, inside an open transaction: inserts `info` with its blob unless
// the key exists (with PutMode::replace: after deleting it), writes pending
// hits back and evicts down to the bound.
sql::Res<PutResult> insert_locked(Store::Impl& s, const EntryInfo& info,
                                  std::span<const std::uint8_t> raw, const Checksum& checksum,
                                  const Encoded& encoded, PutMode mode) {
    if (mode == PutMode::replace) {
        auto drop = s.db.cached(rows::kDeleteEntryByKey);
        if (!drop.ok()) {
            return fail(drop.error());
        }
        auto st = drop.value()->bind_all(info.key.hex());
        if (st.ok()) {
            st = drop.value()->run();
        }
        if (!st.ok()) {
            return fail(st.error());
        }
        s.touches.erase(info.key.hex());
    }
    auto insert = s.db.cached(rows::kInsertEntry);
    if (!insert.ok()) {
        return fail(insert.error());
    }
    if (auto b = rows::bind_entry(*insert.value(), info, checksum); !b.ok()) {
        return fail(b.error());
    }
    auto row = insert.value()->step();
    if (!row.ok()) {
        return fail(row.error());
    }
    if (!row.value()) {
        return PutResult{info.key, PutOutcome::already_present};
    }
    const std::int64_t id = insert.value()->int64(0);
    if (auto r = insert.value()->step(); !r.ok()) {  // finishes the RETURNING clause
        return fail(r.error());
    }
    auto blob = s.db.cached(rows::kInsertBlob);
    if (!blob.ok()) {
        return fail(blob.error());
    }
    auto st = blob.value()->bind_all(id, std::span<const std::uint8_t>(encoded.data));
    if (st.ok()) {
        st = blob.value()->run();
    }
    if (st.ok()) {
        st = s.write_pending();
    }
    if (!st.ok()) {
        return fail(st.error());
    }
    auto evicted = s.evict_to(s.policy.max_bytes, info.key.hex());
    if (!evicted.ok()) {
        return fail(evicted.error());
    }
    s.keep_hot(info, raw, checksum);
    return PutResult{info.key, PutOutcome::stored, evicted.value()};
}

}  // namespace

void Store::Impl::keep_hot(const EntryInfo& info, std::span<const std::uint8_t> raw,
                           const Checksum& checksum) {
    if (policy.max_hot_bytes > 0 &&
        trusted_without_check(info.provenance.origin, info.verification)) {
        hot::write(hot_dir, hot_secret, info.key, serialize_key_fields(info.fields), raw, checksum,
                   policy.max_hot_bytes, hot_tally);
    }
}

void Store::Impl::promote_locked() {
    for (const std::string& key_hex : to_promote) {
        auto row = fetch_locked(*this, key_hex);
        if (!row.ok() || row->checksum.size() != Checksum{}.size()) {
            continue;  // gone since, or not readable now: the next hit asks again
        }
        auto bytes = decode_verified(row->info.codec, row->blob, row->info.raw_size, row->checksum);
        if (bytes.ok()) {
            Checksum sum;
            std::copy(row->checksum.begin(), row->checksum.end(), sum.begin());
            keep_hot(row->info, bytes.value(), sum);
        }
    }
}

Result<Entry, Miss> Store::get(const KeyFields& fields) {
    return get_entry(*impl_, make_key(fields), &fields);
}

Result<Entry, Miss> Store::get(const Key& key) {
    return get_entry(*impl_, key, nullptr);
}

Result<PutResult, StoreError> Store::put(const KeyFields& fields,
                                         std::span<const std::uint8_t> bytes,
                                         const Provenance& provenance, PutMode mode) {
    if (auto w = impl_->require_writable(); !w.ok()) {
        return fail(w.error());
    }
    if (auto open = impl_->ensure_open(); !open.ok()) {
        return fail(open.error());
    }
    for (const auto& name : fields.entry_points) {
        // The column keeps names space-separated; kernel names are identifiers anyway.
        if (name.empty() || name.find_first_of(" \t\n\r\f\v") != std::string::npos) {
            return fail(StoreError{StoreErrc::invalid_argument,
                                   "entry point name '" + name + "' is empty or has whitespace"});
        }
    }
    if (bytes.size() > kMaxRawSize) {
        return fail(StoreError{StoreErrc::too_large, "entry of " + std::to_string(bytes.size()) +
                                                         " bytes exceeds the largest entry, " +
                                                         std::to_string(kMaxRawSize)});
    }
    // Compress and hash before taking any lock: the write transaction stays short.
    EntryInfo info;
    info.fields = normalized(fields);
    info.key = make_key(info.fields);
    info.provenance = provenance;
    const Encoded encoded =
        encode(bytes, impl_->policy.zstd_level, impl_->policy.zstd_compress_literals);
    const Checksum checksum = checksum_of(bytes);
    info.codec = encoded.codec;
    info.raw_size = bytes.size();
    info.stored_size = encoded.data.size();
    if (info.stored_size > impl_->policy.max_bytes) {
        return fail(
            StoreError{StoreErrc::too_large, "entry of " + std::to_string(info.stored_size) +
                                                 " stored bytes exceeds the store's bound of " +
                                                 std::to_string(impl_->policy.max_bytes)});
    }
    std::lock_guard lock(impl_->mu);
    Impl& s = *impl_;
    auto done = sql::with_retry(s.retry, [&]() -> sql::Res<PutResult> {
        info.created_ms = info.last_use_ms = s.now();
        auto txn = sql::Transaction::begin(s.db);
        if (!txn.ok()) {
            return fail(txn.error());
        }
        auto result = insert_locked(s, info, bytes, checksum, encoded, mode);
        if (result.ok()) {
            if (auto c = txn->commit(); !c.ok()) {
                // The copy written in this transaction goes before it ends
                // (rolled back with txn): under the write lock still, so it
                // is never another writer's copy of the key, committed since.
                if (result->outcome == PutOutcome::stored) {
                    hot::forget(s.hot_dir, info.key.hex());
                }
                return fail(c.error());
            }
        }
        return result;
    });
    if (!done.ok()) {
        return fail(s.error(done.error()));
    }
    if (done->outcome == PutOutcome::stored) {  // pending hits went out with it
        s.touches.clear();
        s.pending = TierStats{"user", 0, {}};
        s.last_flush_ms = s.now();
    }
    return std::move(done).value();
}

}  // namespace kcache::store
