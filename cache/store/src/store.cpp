// Store::get and Store::put: the hot paths.

#include "entry_row.hpp"
#include "kcache/store/codec.hpp"
#include "kcache/store/log.hpp"
#include "store_impl.hpp"

namespace kcache::store {
namespace {

struct Lookup {
    Result<Entry, Miss> result;
    std::vector<std::uint8_t> checksum;  // kept to quarantine exactly this entry
};

// Lock held: reads and verifies the entry under `key_hex`.
Lookup lookup(Store::Impl& s, const std::string& key_hex) {
    auto found = sql::with_retry(s.retry, [&]() -> sql::Res<Lookup> {
        auto stmt = s.db.cached(rows::kSelectEntryByKey);
        if (!stmt.ok()) {
            return fail(stmt.error());
        }
        sql::StmtRef& q = stmt.value();
        auto bound = q->bind(1, key_hex);
        if (!bound.ok()) {
            return fail(bound.error());
        }
        auto row = q->step();
        if (!row.ok()) {
            return fail(row.error());
        }
        if (!row.value()) {
            return Lookup{fail(Miss{MissReason::NotFound, {}}), {}};
        }
        auto entry = rows::read_verified(*q);
        if (entry.ok()) {
            return Lookup{std::move(entry).value(), {}};
        }
        auto sum = q->blob(rows::kInfoColumns);
        return Lookup{fail(Miss{MissReason::Corrupt, entry.error()}), {sum.begin(), sum.end()}};
    });
    if (!found.ok()) {
        MissReason reason = found.error().busy() ? MissReason::Busy : MissReason::IoError;
        if (found.error().corrupt()) {
            reason = MissReason::Corrupt;
        }
        return Lookup{fail(Miss{reason, s.error(found.error()).message}), {}};
    }
    return std::move(found).value();
}

Result<Entry, Miss> get_locked(Store::Impl& s, const Key& key, const KeyFields* requested) {
    const std::string key_hex = key.hex();
    Lookup found = lookup(s, key_hex);
    if (!found.result.ok()) {
        const Miss& miss = found.result.error();
        if (miss.reason == MissReason::Corrupt && !found.checksum.empty()) {
            s.quarantine(key_hex, found.checksum, miss.detail);
        }
        s.count_miss(miss.reason);
        return found.result;
    }
    if (requested != nullptr) {
        auto diff = differing_fields(found.result->info.fields, *requested);
        if (!diff.empty()) {
            s.count_miss(MissReason::Collision);
            return fail(Miss{MissReason::Collision,
                             "key " + key_hex + " holds an entry whose " + diff.front() +
                                 " differs from the request (SHA-256 collision)"});
        }
    }
    s.count_hit(key_hex);
    return found.result;
}

// Lock held, inside an open transaction: inserts `info` with its blob unless
// the key exists, writes pending hits back and evicts down to the bound.
sql::Res<PutResult> insert_locked(Store::Impl& s, const EntryInfo& info, const Checksum& checksum,
                                  const Encoded& encoded) {
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
        return PutResult{info.key, PutOutcome::AlreadyPresent};
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
    return PutResult{info.key, PutOutcome::Stored, evicted.value()};
}

}  // namespace

Result<Entry, Miss> Store::get(const KeyFields& fields) {
    const Key key = make_key(fields);
    std::lock_guard lock(impl_->mu);
    return get_locked(*impl_, key, &fields);
}

Result<Entry, Miss> Store::get(const Key& key) {
    std::lock_guard lock(impl_->mu);
    return get_locked(*impl_, key, nullptr);
}

Result<PutResult, StoreError> Store::put(const KeyFields& fields,
                                         std::span<const std::uint8_t> bytes,
                                         const Provenance& provenance) {
    if (auto w = impl_->require_writable(); !w.ok()) {
        return fail(w.error());
    }
    // Compress and hash before taking any lock: the write transaction stays short.
    EntryInfo info;
    info.fields = normalized(fields);
    info.key = make_key(info.fields);
    info.provenance = provenance;
    const Encoded encoded = encode(bytes, impl_->policy.zstd_level);
    const Checksum checksum = checksum_of(bytes);
    info.codec = encoded.codec;
    info.raw_size = bytes.size();
    info.stored_size = encoded.data.size();
    if (info.stored_size > impl_->policy.max_bytes) {
        return fail(
            StoreError{StoreErrc::TooLarge, "entry of " + std::to_string(info.stored_size) +
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
        auto result = insert_locked(s, info, checksum, encoded);
        if (result.ok()) {
            if (auto c = txn->commit(); !c.ok()) {
                return fail(c.error());
            }
        }
        return result;
    });
    if (!done.ok()) {
        return fail(s.error(done.error()));
    }
    if (done->outcome == PutOutcome::Stored) {  // pending hits went out with it
        s.touches.clear();
        s.pending = TierStats{"user", 0, {}};
        s.last_flush_ms = s.now();
    }
    return std::move(done).value();
}

}  // namespace kcache::store
