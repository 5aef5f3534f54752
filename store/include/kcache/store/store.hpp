#pragma once
// The user store: one SQLite database (WAL) in a private directory holding
// compressed, checksummed entries, failure records and persisted counters.
// Thread-safe (one internal lock); several processes may share one directory.

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/store/hot_bytes.hpp"
#include "kcache/store/types.hpp"

namespace kcache::store {

class Pack;

// File name of the database inside a store directory.
inline constexpr const char* kStoreFileName = "store.sqlite";

// Whether a user-store entry of `origin` and `verification` may be loaded
// without checking it first: every entry this node built, promoted or
// stored after its own check may, one imported from a pack may not until
// its known-answer test passed on its device. Only these have hot copies.
inline bool trusted_without_check(Origin origin, Verification verification) {
    return origin != Origin::imported || verification == Verification::passed;
}

class Store {
  public:
    // Opens (creating 0700 if absent) the store in `dir`. Refuses an unsafe
    // directory or one under an ancestor others could replace
    // (UnsafeDirectory), a newer schema (SchemaTooNew, file left untouched)
    // and an SQLite file without kcache's schema (Foreign, left untouched);
    // creates a new store file complete with its schema, race-free between
    // processes; migrates an older one; moves a damaged database file aside
    // (`<name>.corrupt-<time>`, with a warning) and starts afresh; opens
    // read-only, with a warning, when the directory or file cannot be written.
    // With Policy::defer_open, a store file stamped by an earlier writable
    // open is checked then and opened at the first call that needs SQLite;
    // that call reports what the open finds.
    static Result<Store, StoreError> open(const std::filesystem::path& dir, Policy policy = {});
    // A connection that Policy::defer_open put off starts opening now, on a
    // thread of its own (no-op when open, opening, or read-only): the first
    // call that needs SQLite waits for it instead of opening it then (and
    // opens it again itself when that open failed); get_hot() never waits.
    void open_in_background();

    Store(Store&&) noexcept;
    Store& operator=(Store&&) noexcept;
    ~Store();  // writes back pending last-use updates and counters

    // Whether puts are possible (false after a read-only open).
    OpenMode mode() const;
    // The database file.
    const std::filesystem::path& path() const;

    // Returns the verified entry for `fields`; a Miss (NotFound, Corrupt:
    // quarantined, Collision: stored fields differ, IoError, Busy) otherwise.
    Result<Entry, Miss> get(const KeyFields& fields);
    // Same, by key alone (no collision check possible).
    Result<Entry, Miss> get(const Key& key);
    // Returns the bytes of the entry for `fields` from its hot copy (a file
    // of its own, Policy::max_hot_bytes), without SQLite, and counts the hit;
    // nullopt when there is no sound copy (then ask get()). A copy exists
    // only while its entry does, and holds the entry's key record and
    // checksum, both verified here; entries get one when stored and, when
    // first hit through SQLite, with the next write-back.
    std::optional<Bytes> get_hot(const KeyFields& fields);
    // The same, the bytes left in the memory they were read into: the
    // thread's, reused, or memory the caller takes (hot_bytes.hpp).
    std::optional<HotBytes> read_hot(const KeyFields& fields,
                                     HotBytes::Memory memory = HotBytes::Memory::reused);
    // The same for the key record `serialized` (serialize_key_fields of the
    // fields) and its key `key` (its SHA-256), made once by the caller.
    std::optional<HotBytes> read_hot(const Key& key, std::string_view serialized,
                                     HotBytes::Memory memory = HotBytes::Memory::reused);

    // Stores `bytes` under make_key(`fields`) in one transaction and returns
    // after commit; evicts least recently used entries beyond the size bound.
    // An existing entry under the key is kept (AlreadyPresent), or with
    // PutMode::replace replaced in the same transaction (readers see the old
    // entry or the new one, never none). Fails with ReadOnly, TooLarge, Busy
    // or Io.
    Result<PutResult, StoreError> put(const KeyFields& fields, std::span<const std::uint8_t> bytes,
                                      const Provenance& provenance,
                                      PutMode mode = PutMode::keep_existing);

    // Removes the entry under `key`; returns whether one existed.
    Result<bool, StoreError> remove(const Key& key);
    // Records the on-device verification result of the entry; false if absent.
    Result<bool, StoreError> set_verified(const Key& key, Verification result);

    // Returns every entry's metadata, least recently used first (`kcache ls`).
    Result<std::vector<EntryInfo>, StoreError> list();
    // Returns the metadata of the entry under `key`, if any (bytes not read).
    Result<std::optional<EntryInfo>, StoreError> info(const Key& key);
    // Returns up to `limit` entries nearest to `fields` (fewest differing
    // hashed fields first) with the names of the fields that differ (`kcache explain`).
    Result<std::vector<NearEntry>, StoreError> nearest(const KeyFields& fields, std::size_t limit);

    // Removes entries per `options`, then returns freed pages to the file system.
    Result<GcReport, StoreError> gc(const GcOptions& options);

    // Writes the entries under `keys` (all when empty), each verified first,
    // to a new pack file at `pack_path` (which must not exist); returns the count.
    Result<std::uint64_t, StoreError> export_pack(const std::filesystem::path& pack_path,
                                                  const std::vector<Key>& keys = {});
    // Copies every entry of the pack at `pack_path` whose checksum verifies
    // into this store (origin Import); refuses a newer schema.
    Result<ImportReport, StoreError> import_pack(const std::filesystem::path& pack_path);
    // The same from an opened pack (one whose signature was checked over the
    // descriptor it reads: open_checked_pack in trust.hpp). With `accept`,
    // only the sound entries it accepts are copied; the others are counted
    // as rejected (the CLI's load check: a binary the driver cannot load).
    Result<ImportReport, StoreError> import_pack(
        Pack& pack, const std::function<bool(const Entry&)>& accept = {});

    // Records a failure of `kind` for `key` that happened under a time budget
    // of `budget_ms` (0: unknown): count +1, last seen now, expiry base TTL
    // doubled per repeat (capped). Returns the updated record.
    Result<FailureRecord, StoreError> record_failure(const Key& key, FailureKind kind,
                                                     std::string_view detail, TimeMs budget_ms = 0);
    // Returns the unexpired failure record for `key` seen last that holds back
    // a request with a budget of `budget_ms`, if any: a timeout record does not
    // hold back a request whose budget is larger than its own.
    Result<std::optional<FailureRecord>, StoreError> find_fresh_failure(const Key& key,
                                                                        TimeMs budget_ms = 0);
    // Removes every failure record of `key`; returns how many there were.
    Result<std::uint64_t, StoreError> clear_failures(const Key& key);
    // Removes every failure record of the store; returns how many there were.
    Result<std::uint64_t, StoreError> clear_all_failures();
    // Returns every failure record, expired ones included, latest first.
    Result<std::vector<FailureRecord>, StoreError> list_failures();

    // What check_hot_copies() found.
    struct HotCheck {
        std::uint64_t checked = 0;
        std::uint64_t removed = 0;
        std::uint64_t leftovers = 0;  // temporary files of writers that stopped
    };
    // Checks every hot copy against its entry (key record, size, checksum)
    // and removes a damaged one, one that differs from or is larger than its
    // entry, and one without an entry; an entry gets its copy again at its
    // next hit (`kcache verify`); and removes the temporary files of writers
    // that stopped mid-write. Nothing to check on a read-only handle.
    Result<HotCheck, StoreError> check_hot_copies();

    // Returns counters (tier "user"), sizes, evictions and corruptions.
    Result<Stats, StoreError> stats();
    // Writes pending last-use updates and counters now.
    Status<StoreError> flush();

    struct Impl;

  private:
    explicit Store(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace kcache::store
