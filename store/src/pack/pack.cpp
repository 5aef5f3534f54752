// Read-only packs and the tiered lookup.

#include "kcache/store/pack.hpp"

#include <mutex>

#include "coverage_table.hpp"
#include "entry_row.hpp"
#include "errata_table.hpp"
#include "kcache/common/log.hpp"
#include "kcache/common/read_file.hpp"
#include "pack_vfs.hpp"
#include "schema.hpp"
#include "sqlite.hpp"

namespace kcache::store {
namespace fs = std::filesystem;

struct Pack::Impl {
    fs::path path;
    sql::Db db;
    mutable std::mutex mu;  // guards db and counters
    TierStats counters;
    std::vector<AotCoverage> coverage;  // immutable after open
    std::string errata;                 // immutable after open

    Result<Entry, Miss> lookup(const Key& key);
};

Result<Entry, Miss> Pack::Impl::lookup(const Key& key) {
    std::lock_guard lock(mu);
    auto miss = [&](MissReason r, std::string detail) -> Result<Entry, Miss> {
        ++counters.misses[static_cast<std::size_t>(r)];
        return fail(Miss{r, std::move(detail)});
    };
    auto stmt = db.cached(rows::kSelectEntryByKey);
    if (!stmt.ok()) {
        return miss(MissReason::io_error, stmt.error().message);
    }
    auto st = stmt.value()->bind(1, key.hex());
    auto row = st.ok() ? stmt.value()->step() : sql::Res<bool>(fail(st.error()));
    if (!row.ok()) {
        return miss(row.error().corrupt() ? MissReason::corrupt : MissReason::io_error,
                    path.string() + ": " + row.error().message);
    }
    if (!row.value()) {
        return miss(MissReason::not_found, {});
    }
    auto entry = rows::read_verified(*stmt.value());
    if (!entry.ok()) {
        logging::warning("corrupt entry " + key.hex() + " in pack " + path.string() + " (" +
                         entry.error() + "): skipped");
        return miss(MissReason::corrupt, entry.error());
    }
    ++counters.hits;
    return std::move(entry).value();
}

Result<Pack, StoreError> Pack::open(const fs::path& path) {
    auto fd = open_regular_file(path);  // a FIFO or a device is refused without waiting
    if (!fd) {
        return fail(StoreError{StoreErrc::io, fd.error().code == ReadErrc::not_found
                                                  ? path.string() + ": no such pack file"
                                                  : fd.error().message});
    }
    return open(fd->get(), path);
}

Result<Pack, StoreError> Pack::open(int fd, const fs::path& path) {
    const std::string p = path.string();
    // Read through a duplicate of `fd`, never reopened by name: the bytes the
    // caller checked are the bytes used. Immutable: no locks, no -shm/-wal,
    // nothing written, even beside the file.
    auto db = sql::Db::open_untrusted(pinned::uri(p, fd));
    if (!db.ok()) {
        return fail(schema::to_store_error(db.error(), p));
    }
    if (auto st = schema::check_readable(db.value(), p); !st.ok()) {
        return fail(st.error());
    }
    auto coverage = coverage::read_table(db.value(), p);
    if (!coverage.ok()) {
        return fail(coverage.error());
    }
    auto errata = errata_table::read(db.value(), p);
    if (!errata.ok()) {
        return fail(errata.error());
    }
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    impl->errata = std::move(errata).value();
    impl->db = std::move(db).value();
    impl->coverage = std::move(coverage).value();
    impl->counters.name = p;
    return Pack(std::move(impl));
}

Pack::Pack(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Pack::Pack(Pack&&) noexcept = default;
Pack& Pack::operator=(Pack&&) noexcept = default;
Pack::~Pack() = default;

const fs::path& Pack::path() const {
    return impl_->path;
}

const std::vector<AotCoverage>& Pack::aot_coverage() const {
    return impl_->coverage;
}

const std::string& Pack::errata_document() const {
    return impl_->errata;
}

Result<Entry, Miss> Pack::get(const KeyFields& fields) {
    auto r = impl_->lookup(make_key(fields));
    if (r.ok()) {
        auto diff = differing_fields(r->info.fields, fields);
        if (!diff.empty()) {
            std::lock_guard lock(impl_->mu);
            --impl_->counters.hits;
            ++impl_->counters.misses[static_cast<std::size_t>(MissReason::collision)];
            return fail(Miss{MissReason::collision,
                             impl_->path.string() + ": stored " + diff.front() + " differs"});
        }
    }
    return r;
}

Result<Entry, Miss> Pack::get(const Key& key) {
    return impl_->lookup(key);
}

Result<std::vector<EntryInfo>, StoreError> Pack::list() {
    std::lock_guard lock(impl_->mu);
    auto stmt = impl_->db.cached(rows::kSelectAllInfo);
    std::vector<EntryInfo> out;
    for (;;) {
        auto row = stmt.ok() ? stmt.value()->step() : sql::Res<bool>(fail(stmt.error()));
        if (!row.ok()) {
            return fail(schema::to_store_error(row.error(), impl_->path.string()));
        }
        if (!row.value()) {
            return out;
        }
        out.push_back(rows::read_info(*stmt.value()));
    }
}

Result<std::uint64_t, StoreError> Pack::for_each_verified(const std::function<void(Entry&&)>& f) {
    std::lock_guard lock(impl_->mu);
    auto stmt = impl_->db.cached(rows::kSelectAllEntries);
    std::uint64_t bad = 0;
    for (;;) {
        auto row = stmt.ok() ? stmt.value()->step() : sql::Res<bool>(fail(stmt.error()));
        if (!row.ok()) {
            return fail(schema::to_store_error(row.error(), impl_->path.string()));
        }
        if (!row.value()) {
            return bad;
        }
        auto entry = rows::read_verified(*stmt.value());
        if (entry.ok()) {
            f(std::move(entry).value());
        } else {
            ++bad;
        }
    }
}

TierStats Pack::stats() const {
    std::lock_guard lock(impl_->mu);
    return impl_->counters;
}

TieredStore::TieredStore(std::optional<Store> user, std::vector<Pack> packs)
    : user_(std::move(user)), packs_(std::move(packs)) {}

Store* TieredStore::user() {
    return user_ ? &*user_ : nullptr;
}

void TieredStore::add_packs(std::vector<Pack> packs) {
    for (Pack& p : packs) {
        packs_.push_back(std::move(p));
    }
}

Result<TieredHit, TieredMiss> TieredStore::get(const KeyFields& fields) {
    TieredMiss missed;
    if (user_) {
        auto r = user_->get(fields);
        Tier tier{Tier::Kind::user, 0, "user"};
        if (r.ok()) {
            return TieredHit{std::move(r).value(), tier};
        }
        missed.misses.emplace_back(tier, r.error());
    }
    for (std::size_t i = 0; i < packs_.size(); ++i) {
        auto r = packs_[i].get(fields);
        Tier tier{Tier::Kind::pack, i, packs_[i].path().string()};
        if (r.ok()) {
            return TieredHit{std::move(r).value(), tier};
        }
        missed.misses.emplace_back(tier, r.error());
    }
    return fail(std::move(missed));
}

std::optional<std::pair<fs::path, AotCoverage>> TieredStore::aot_coverage(
    std::string_view target) const {
    for (const Pack& p : packs_) {
        for (const AotCoverage& c : p.aot_coverage()) {
            if (c.ocloc_target == target) {
                return std::pair(p.path(), c);
            }
        }
    }
    return std::nullopt;
}

Result<Stats, StoreError> TieredStore::stats() {
    Stats out;
    if (user_) {
        auto s = user_->stats();
        if (!s.ok()) {
            return fail(s.error());
        }
        out = std::move(s).value();
    }
    for (const auto& p : packs_) {
        out.tiers.push_back(p.stats());
    }
    return out;
}

}  // namespace kcache::store
