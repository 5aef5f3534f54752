// The errata document of packs (pack_errata.hpp).

#include "kcache/store/pack_errata.hpp"

#include "errata_table.hpp"
#include "schema.hpp"

namespace kcache::store {
namespace {

constexpr const char* kErrataCreate =
    "CREATE TABLE IF NOT EXISTS kcache_errata(document TEXT NOT NULL)";
constexpr const char* kErrataClear = "DELETE FROM kcache_errata";
constexpr const char* kErrataInsert = "INSERT INTO kcache_errata VALUES(?)";
constexpr const char* kErrataHasTable =
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'kcache_errata'";
constexpr const char* kErrataRows = "SELECT count(*) FROM kcache_errata";
constexpr const char* kErrataSelect = "SELECT document FROM kcache_errata";

}  // namespace

namespace errata_table {

Result<std::string, StoreError> read(sql::Db& db, const std::string& path) {
    auto has = db.query_int(kErrataHasTable);
    auto rows = has.ok() && has.value() != 0 ? db.query_int(kErrataRows) : has;
    if (!rows.ok()) {
        return fail(schema::to_store_error(rows.error(), path));
    }
    if (has.value() == 0 || rows.value() == 0) {
        return std::string();
    }
    if (rows.value() != 1) {
        return fail(StoreError{StoreErrc::corrupt, path + ": the kcache_errata table has " +
                                                       std::to_string(rows.value()) +
                                                       " rows; a pack carries one"});
    }
    auto stmt = db.cached(kErrataSelect);
    auto row = stmt.ok() ? stmt.value()->step() : sql::Res<bool>(fail(stmt.error()));
    if (!row.ok()) {
        return fail(schema::to_store_error(row.error(), path));
    }
    std::string document = row.value() ? stmt.value()->text(0) : std::string();
    stmt.value()->reset();
    if (document.size() > kMaxPackErrataBytes) {
        return fail(StoreError{StoreErrc::corrupt, path + ": its errata document is larger than " +
                                                       std::to_string(kMaxPackErrataBytes) +
                                                       " bytes"});
    }
    return document;
}

}  // namespace errata_table

Status<StoreError> write_pack_errata(const std::filesystem::path& pack, std::string_view document) {
    const std::string p = pack.string();
    if (document.empty() || document.size() > kMaxPackErrataBytes) {
        return fail(StoreError{StoreErrc::invalid_argument,
                               p + ": an errata document must hold 1 to " +
                                   std::to_string(kMaxPackErrataBytes) + " bytes"});
    }
    return schema::write_in_transaction(p, [&](sql::Db& db) {
        sql::Stat st = db.exec(kErrataCreate);
        if (st.ok()) {
            st = db.exec(kErrataClear);
        }
        if (st.ok()) {
            auto insert = db.cached(kErrataInsert);
            st = insert.ok() ? insert.value()->bind(1, document) : sql::Stat(fail(insert.error()));
            if (st.ok()) {
                st = insert.value()->run();
            }
        }
        return st;
    });
}

}  // namespace kcache::store
