#pragma once
// Packs: read-only SQLite files of the store's schema (the system tier,
// built at install time), and the tiered lookup: user store, then packs.

#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/store/coverage.hpp"
#include "kcache/store/store.hpp"
#include "kcache/store/types.hpp"

namespace kcache::store {

// One pack file, opened read-only (immutable: works when the file and its
// directory are read-only and owned by root). Never written. Thread-safe.
class Pack {
  public:
    // Opens `path`; fails with Io (missing, unreadable), Corrupt (not SQLite),
    // SchemaTooNew or SchemaTooOld.
    static Result<Pack, StoreError> open(const std::filesystem::path& path);
    // Opens the pack file open at `fd` (named `path` in messages), reading
    // exactly that file, however its name is changed later. The caller keeps
    // `fd`; the pack reads through its own duplicate.
    static Result<Pack, StoreError> open(int fd, const std::filesystem::path& path);

    Pack(Pack&&) noexcept;
    Pack& operator=(Pack&&) noexcept;
    ~Pack();

    const std::filesystem::path& path() const;

    // Returns the verified entry; a Miss otherwise (a corrupt entry is
    // logged and counted but stays in the file).
    Result<Entry, Miss> get(const KeyFields& fields);
    Result<Entry, Miss> get(const Key& key);
    // Returns every entry's metadata.
    Result<std::vector<EntryInfo>, StoreError> list();
    // Calls `f(entry)` for each entry whose bytes verify; returns how many did not.
    Result<std::uint64_t, StoreError> for_each_verified(const std::function<void(Entry&&)>& f);
    // Counters of this process's lookups (tier name: the path).
    TierStats stats() const;
    // The AOT coverage records of the pack (read at open; empty for a pack
    // made by export rather than prebuild).
    const std::vector<AotCoverage>& aot_coverage() const;
    // The errata document the pack carries (read at open, through the
    // descriptor checked; pack_errata.hpp); "" when it carries none.
    const std::string& errata_document() const;

    struct Impl;

  private:
    explicit Pack(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// Which tier answered a tiered lookup.
struct Tier {
    enum class Kind { user, pack } kind = Kind::user;
    std::size_t index = 0;  // position among the packs (Kind::pack)
    std::string name;       // "user" or the pack's path
};

struct TieredHit {
    Entry entry;
    Tier tier;
};

// Why every tier missed, in search order.
struct TieredMiss {
    std::vector<std::pair<Tier, Miss>> misses;
};

// The user store (optional) followed by packs in order. Only the user store
// is ever written (through user()).
class TieredStore {
  public:
    TieredStore(std::optional<Store> user, std::vector<Pack> packs);

    // Returns the first verified entry for `fields` and the tier it came from.
    Result<TieredHit, TieredMiss> get(const KeyFields& fields);
    // The writable tier; nullptr when there is none.
    Store* user();
    // Appends `packs` after the packs it has (a cache opens its packs at
    // their first use; not while another thread reads the packs).
    void add_packs(std::vector<Pack> packs);
    // Stats of the user store (first) and every pack.
    Result<Stats, StoreError> stats();
    // The coverage record of the first pack that has one for AOT target
    // `target`, and that pack's path.
    std::optional<std::pair<std::filesystem::path, AotCoverage>> aot_coverage(
        std::string_view target) const;

  private:
    std::optional<Store> user_;
    std::vector<Pack> packs_;
};

}  // namespace kcache::store
