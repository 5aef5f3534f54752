// Export of user-store entries to a new pack file, and import from a pack.

#include <sys/stat.h>
#include <unistd.h>

#include "entry_row.hpp"
#include "kcache/store/pack.hpp"
#include "store_impl.hpp"

namespace kcache::store {
namespace fs = std::filesystem;
namespace {

// Copies the verified row under the cursor of `src` (kSelectEntryByKey or
// kSelectAllEntries) into `pack`, keeping its stored blob as is. Returns
// false when the row does not verify (it is left out).
sql::Res<bool> copy_row(const sql::Stmt& src, sql::Db& pack) {
    auto verified = rows::read_verified(src);
    if (!verified.ok()) {
        return false;
    }
    EntryInfo info = std::move(verified.value().info);
    info.hit_count = 0;
    auto sum = src.blob(rows::kInfoColumns);
    Checksum checksum{};
    std::copy(sum.begin(), sum.end(), checksum.begin());
    auto insert = pack.cached(rows::kInsertEntry);
    if (!insert.ok()) {
        return fail(insert.error());
    }
    if (auto st = rows::bind_entry(*insert.value(), info, checksum); !st.ok()) {
        return fail(st.error());
    }
    auto row = insert.value()->step();
    if (!row.ok() || !row.value()) {
        return row;  // an error, or a key listed twice
    }
    const std::int64_t id = insert.value()->int64(0);
    if (auto r = insert.value()->step(); !r.ok()) {
        return fail(r.error());
    }
    auto blob = pack.cached(rows::kInsertBlob);
    if (!blob.ok()) {
        return fail(blob.error());
    }
    auto st = blob.value()->bind_all(id, src.blob(rows::kInfoColumns + 1));
    if (st.ok()) {
        st = blob.value()->run();
    }
    if (!st.ok()) {
        return fail(st.error());
    }
    return true;
}

// Lock held on `s`: copies the selected entries into `pack` (inside its transaction).
sql::Res<std::uint64_t> copy_entries(Store::Impl& s, sql::Db& pack, const std::vector<Key>& keys) {
    std::uint64_t copied = 0;
    auto copy_all_rows = [&](sql::StmtRef& stmt) -> sql::Stat {
        for (;;) {
            auto row = stmt->step();
            if (!row.ok()) {
                return fail(row.error());
            }
            if (!row.value()) {
                return Ok{};
            }
            auto c = copy_row(*stmt, pack);
            if (!c.ok()) {
                return fail(c.error());
            }
            copied += c.value() ? 1 : 0;
        }
    };
    if (keys.empty()) {
        auto stmt = s.db.cached(rows::kSelectAllEntries);
        auto st = stmt.ok() ? copy_all_rows(stmt.value()) : sql::Stat(fail(stmt.error()));
        return st.ok() ? sql::Res<std::uint64_t>(copied) : fail(st.error());
    }
    for (const Key& key : keys) {
        auto stmt = s.db.cached(rows::kSelectEntryByKey);
        auto st = stmt.ok() ? stmt.value()->bind(1, key.hex()) : sql::Stat(fail(stmt.error()));
        if (st.ok()) {
            st = copy_all_rows(stmt.value());
        }
        if (!st.ok()) {
            return fail(st.error());
        }
    }
    return copied;
}

}  // namespace

Result<std::uint64_t, StoreError> Store::export_pack(const fs::path& pack_path,
                                                     const std::vector<Key>& keys) {
    if (auto open = impl_->ensure_open(); !open.ok()) {
        return fail(open.error());
    }
    std::error_code ec;
    if (fs::exists(pack_path, ec)) {
        return fail(StoreError{StoreErrc::invalid_argument,
                               pack_path.string() + " exists; packs are only written new"});
    }
    // Written under a temporary name and renamed: a pack is complete or absent.
    const fs::path tmp = pack_path.string() + ".tmp-" + std::to_string(::getpid());
    fs::remove(tmp, ec);
    auto fail_with = [&](const StoreError& e) -> Result<std::uint64_t, StoreError> {
        fs::remove(tmp, ec);
        return fail(e);
    };
    auto pack = sql::Db::open(sql::file_uri(tmp.string(), ""),
                              SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, 0);
    if (!pack.ok()) {
        return fail_with(schema::to_store_error(pack.error(), tmp.string()));
    }
    sql::Db& db = pack.value();
    if (auto st = schema::ensure_current(db, tmp.string(), {}); !st.ok()) {
        return fail_with(st.error());
    }
    std::lock_guard lock(impl_->mu);
    auto txn = sql::Transaction::begin(db);
    if (!txn.ok()) {
        return fail_with(schema::to_store_error(txn.error(), tmp.string()));
    }
    auto copied = copy_entries(*impl_, db, keys);
    sql::Stat st = copied.ok() ? txn->commit() : sql::Stat(fail(copied.error()));
    if (!st.ok()) {
        return fail_with(schema::to_store_error(st.error(), pack_path.string()));
    }
    pack = sql::Db::open(":memory:", SQLITE_OPEN_READWRITE, 0);  // closes the pack file
    if (::chmod(tmp.c_str(), 0644) != 0 || ::rename(tmp.c_str(), pack_path.c_str()) != 0) {
        return fail_with(StoreError{StoreErrc::io, pack_path.string() + ": cannot publish pack"});
    }
    return copied.value();
}

Result<ImportReport, StoreError> Store::import_pack(const fs::path& pack_path) {
    if (auto open = impl_->ensure_open(); !open.ok()) {
        return fail(open.error());
    }
    auto pack = Pack::open(pack_path);
    if (!pack.ok()) {
        return fail(pack.error());
    }
    return import_pack(*pack);
}

Result<ImportReport, StoreError> Store::import_pack(
    Pack& pack, const std::function<bool(const Entry&)>& accept) {
    if (auto open = impl_->ensure_open(); !open.ok()) {
        return fail(open.error());
    }
    if (auto w = impl_->require_writable(); !w.ok()) {
        return fail(w.error());
    }
    ImportReport report;
    std::optional<StoreError> first_error;
    auto bad = pack.for_each_verified([&](Entry&& e) {
        if (first_error) {
            return;
        }
        if (accept && !accept(e)) {
            ++report.rejected;
            return;
        }
        Provenance p = e.info.provenance;
        p.origin = Origin::imported;
        auto r = put(e.info.fields, e.bytes, p);
        if (!r.ok()) {
            first_error = r.error();
        } else if (r->outcome == PutOutcome::stored) {
            ++report.imported;
        } else {
            ++report.already_present;
        }
    });
    if (!bad.ok()) {
        return fail(bad.error());
    }
    if (first_error) {
        return fail(*first_error);
    }
    report.corrupt = bad.value();
    return report;
}

}  // namespace kcache::store
