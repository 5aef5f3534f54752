#include "schema.hpp"

#include <limits>

namespace kcache::store::schema {
namespace {

// Version 1: entries (one row per key, every key field a column), blobs kept
// apart so metadata scans never read blob pages, totals maintained by
// triggers, persisted counters, failure records.
constexpr const char* kCreateV1 = R"sql(
CREATE TABLE schema_version(version INTEGER NOT NULL);
CREATE TABLE entries(
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  key_version INTEGER NOT NULL,
  kernel_name TEXT NOT NULL,
  source_digest TEXT NOT NULL,
  entry_points TEXT NOT NULL,
  build_options TEXT NOT NULL,
  target_format TEXT NOT NULL,
  vendor_id INTEGER NOT NULL,
  device_name TEXT NOT NULL,
  pci_device_id INTEGER NOT NULL,
  ip_version INTEGER NOT NULL,
  driver_version TEXT NOT NULL,
  platform_name TEXT NOT NULL,
  platform_version TEXT NOT NULL,
  opencl_c_version TEXT NOT NULL,
  address_bits INTEGER NOT NULL,
  device_uuid TEXT NOT NULL,
  driver_uuid TEXT NOT NULL,
  compiler_id TEXT NOT NULL,
  codec INTEGER NOT NULL,
  raw_size INTEGER NOT NULL,
  stored_size INTEGER NOT NULL,
  checksum BLOB NOT NULL,
  producer_version TEXT NOT NULL,
  origin INTEGER NOT NULL,
  build_time_ms INTEGER NOT NULL,
  build_log TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  last_use_ms INTEGER NOT NULL,
  hit_count INTEGER NOT NULL DEFAULT 0);
CREATE INDEX entries_lru ON entries(last_use_ms);
CREATE INDEX entries_source ON entries(source_digest);
CREATE TABLE blobs(id INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE totals(
  id INTEGER PRIMARY KEY CHECK (id = 1),
  entries INTEGER NOT NULL, raw_bytes INTEGER NOT NULL, stored_bytes INTEGER NOT NULL);
INSERT INTO totals VALUES (1, 0, 0, 0);
CREATE TRIGGER entries_insert AFTER INSERT ON entries BEGIN
  UPDATE totals SET entries = entries + 1, raw_bytes = raw_bytes + NEW.raw_size,
    stored_bytes = stored_bytes + NEW.stored_size WHERE id = 1;
END;
CREATE TRIGGER entries_delete AFTER DELETE ON entries BEGIN
  UPDATE totals SET entries = entries - 1, raw_bytes = raw_bytes - OLD.raw_size,
    stored_bytes = stored_bytes - OLD.stored_size WHERE id = 1;
  DELETE FROM blobs WHERE id = OLD.id;
END;
CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE failures(
  key TEXT NOT NULL, kind INTEGER NOT NULL, detail TEXT NOT NULL, count INTEGER NOT NULL,
  first_seen_ms INTEGER NOT NULL, last_seen_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL,
  PRIMARY KEY (key, kind));
INSERT INTO schema_version VALUES (1);
)sql";

// Migrations: kMigrations[v - 1] takes version v to v + 1.
// 1 → 2: the on-device verification result of each entry.
// 2 → 3: the time budget a failure happened under (0: unknown, as in records
// written before; a timeout record then holds back no request).
constexpr const char* kMigrations[] = {
    R"sql(
ALTER TABLE entries ADD COLUMN verification INTEGER NOT NULL DEFAULT 0;
ALTER TABLE entries ADD COLUMN verified_at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE schema_version SET version = 2;
)sql",
    R"sql(
ALTER TABLE failures ADD COLUMN budget_ms INTEGER NOT NULL DEFAULT 0;
UPDATE schema_version SET version = 3;
)sql",
};
static_assert(std::size(kMigrations) == kCurrentVersion - 1);

// Inside an open write transaction: creates or migrates to kCurrentVersion.
sql::Stat upgrade_locked(sql::Db& db, int version) {
    if (version == 0) {
        auto st = db.exec(kCreateV1);
        if (!st.ok()) {
            return st;
        }
        version = 1;
    }
    for (; version < kCurrentVersion; ++version) {
        auto st = db.exec(kMigrations[version - 1]);
        if (!st.ok()) {
            return st;
        }
    }
    return Ok{};
}

}  // namespace

StoreError too_new(int found, const std::string& path) {
    return {StoreErrc::schema_too_new,
            path + ": schema version " + std::to_string(found) + " was written by a newer kcache " +
                "(this one reads up to " + std::to_string(kCurrentVersion) +
                "); the file is left untouched: upgrade kcache, or point KCACHE_DIR elsewhere"};
}

StoreError not_a_store(sql::Db& db, const std::string& path) {
    auto tables = db.query_int("SELECT count(*) FROM sqlite_master");
    const std::string what = !tables.ok()          ? "an unreadable SQLite file"
                             : tables.value() == 0 ? "an empty SQLite database"
                                                   : "an SQLite database of another program";
    return {StoreErrc::foreign,
            path + " is " + what +
                ", not a kcache store or pack; kcache neither reads nor writes it. Fix: move it "
                "away, or point KCACHE_DIR at another directory"};
}

StoreError to_store_error(const sql::SqlError& e, const std::string& path) {
    StoreErrc code = e.busy()                    ? StoreErrc::busy
                     : e.corrupt()               ? StoreErrc::corrupt
                     : e.code == SQLITE_READONLY ? StoreErrc::read_only
                                                 : StoreErrc::io;
    return {code, path + ": SQLite: " + e.message};
}

sql::Res<int> read_version(sql::Db& db) {
    auto has = db.query_int(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
    if (!has.ok()) {
        return fail(has.error());
    }
    if (has.value() == 0) {
        return 0;
    }
    auto v = db.query_int("SELECT max(version) FROM schema_version");
    if (!v.ok()) {
        return fail(v.error());
    }
    // kcache writes versions from 1 up; anything else in an existing table
    // (0, negative, NULL, text, beyond int) is damage, never a version to
    // migrate from.
    if (v.value() < 1 || v.value() > std::numeric_limits<int>::max()) {
        return fail(sql::SqlError{
            SQLITE_CORRUPT,
            "schema_version holds " + std::to_string(v.value()) + ", not a schema version"});
    }
    return static_cast<int>(v.value());
}

Status<StoreError> ensure_current(sql::Db& db, const std::string& path,
                                  const sql::RetryPolicy& retry) {
    auto done = sql::with_retry(retry, [&]() -> sql::Res<int> {
        auto v = read_version(db);
        if (!v.ok() || v.value() >= kCurrentVersion) {
            return v;
        }
        auto txn = sql::Transaction::begin(db);
        if (!txn.ok()) {
            return fail(txn.error());
        }
        // Another process may have created or migrated it while we waited.
        v = read_version(db);
        if (!v.ok() || v.value() >= kCurrentVersion) {
            return v;
        }
        auto st = upgrade_locked(db, v.value());
        if (!st.ok()) {
            return fail(st.error());
        }
        st = txn->commit();
        if (!st.ok()) {
            return fail(st.error());
        }
        return kCurrentVersion;
    });
    if (!done.ok()) {
        return fail(to_store_error(done.error(), path));
    }
    if (done.value() > kCurrentVersion) {
        return fail(too_new(done.value(), path));
    }
    return Ok{};
}

Status<StoreError> check_readable(sql::Db& db, const std::string& path) {
    auto v = read_version(db);
    if (!v.ok()) {
        return fail(to_store_error(v.error(), path));
    }
    if (v.value() > kCurrentVersion) {
        return fail(too_new(v.value(), path));
    }
    if (v.value() == 0) {
        return fail(not_a_store(db, path));
    }
    if (v.value() < kCurrentVersion) {
        return fail(StoreError{StoreErrc::schema_too_old,
                               path + ": schema version " + std::to_string(v.value()) +
                                   " is older than " + std::to_string(kCurrentVersion) +
                                   " and cannot be migrated read-only: open it writable once, "
                                   "or re-export the pack"});
    }
    return Ok{};
}

Status<StoreError> write_in_transaction(const std::string& path,
                                        const std::function<sql::Stat(sql::Db&)>& body) {
    auto db = sql::Db::open(sql::file_uri(path, ""), SQLITE_OPEN_READWRITE, 1000);
    if (!db.ok()) {
        return fail(to_store_error(db.error(), path));
    }
    if (auto readable = check_readable(db.value(), path); !readable.ok()) {
        return fail(readable.error());
    }
    auto txn = sql::Transaction::begin(db.value());
    sql::Stat st = txn.ok() ? body(db.value()) : sql::Stat(fail(txn.error()));
    if (st.ok()) {
        st = txn->commit();
    }
    if (!st.ok()) {
        return fail(to_store_error(st.error(), path));
    }
    return Ok{};
}

}  // namespace kcache::store::schema
