#include "coverage.hpp"

#include <sqlite3.h>

#include <memory>
#include <sstream>

#include "kcache/device_db/ids.hpp"

namespace kcache::cli {
namespace {

struct DbClose {
    void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StmtFinalize {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using DbPtr = std::unique_ptr<sqlite3, DbClose>;
using StmtPtr = std::unique_ptr<sqlite3_stmt, StmtFinalize>;

constexpr const char* kCreate =
    "CREATE TABLE IF NOT EXISTS kcache_aot_coverage(family TEXT PRIMARY KEY, "
    "ocloc_target TEXT NOT NULL, status TEXT NOT NULL, pci_ids TEXT NOT NULL, "
    "compiler TEXT NOT NULL, detail TEXT NOT NULL)";
constexpr const char* kInsert = "INSERT OR REPLACE INTO kcache_aot_coverage VALUES(?,?,?,?,?,?)";
constexpr const char* kSelect =
    "SELECT family, ocloc_target, status, pci_ids, compiler, detail FROM kcache_aot_coverage "
    "ORDER BY family";

std::string error_of(sqlite3* db, const std::filesystem::path& path) {
    return path.string() + ": " + (db ? sqlite3_errmsg(db) : "cannot open");
}

std::string join_ids(const std::vector<std::uint32_t>& ids) {
    std::string out;
    for (std::uint32_t id : ids) {
        out += (out.empty() ? "" : ",") + device_db::hex_id(id);
    }
    return out;
}

std::vector<std::uint32_t> split_ids(const std::string& text) {
    std::vector<std::uint32_t> ids;
    std::istringstream in(text);
    for (std::string item; std::getline(in, item, ',');) {
        if (auto id = device_db::parse_hex_id(item)) {
            ids.push_back(*id);
        }
    }
    return ids;
}

CoverageStatus status_from(const std::string& s) {
    if (s == "covered") {
        return CoverageStatus::covered;
    }
    return s == "not_targetable" ? CoverageStatus::not_targetable : CoverageStatus::failed;
}

bool bind_text(sqlite3_stmt* s, int index, const std::string& text) {
    return sqlite3_bind_text(s, index, text.c_str(), static_cast<int>(text.size()),
                             SQLITE_TRANSIENT) == SQLITE_OK;
}

std::string column_text(sqlite3_stmt* s, int index) {
    const unsigned char* text = sqlite3_column_text(s, index);
    return text ? reinterpret_cast<const char*>(text) : "";
}

}  // namespace

const char* to_string(CoverageStatus s) {
    switch (s) {
        case CoverageStatus::covered:
            return "covered";
        case CoverageStatus::not_targetable:
            return "not_targetable";
        case CoverageStatus::failed:
            break;
    }
    return "failed";
}

Status<std::string> write_coverage(const std::filesystem::path& pack,
                                   const std::vector<CoverageRecord>& records) {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(pack.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
    DbPtr db(raw);
    if (rc != SQLITE_OK || sqlite3_exec(raw, kCreate, nullptr, nullptr, nullptr) != SQLITE_OK ||
        sqlite3_exec(raw, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) {
        return fail(error_of(raw, pack));
    }
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(raw, kInsert, -1, &stmt, nullptr) != SQLITE_OK) {
        return fail(error_of(raw, pack));
    }
    StmtPtr insert(stmt);
    for (const CoverageRecord& r : records) {
        sqlite3_reset(stmt);
        const bool bound = bind_text(stmt, 1, r.family) && bind_text(stmt, 2, r.ocloc_target) &&
                           bind_text(stmt, 3, to_string(r.status)) &&
                           bind_text(stmt, 4, join_ids(r.pci_ids)) &&
                           bind_text(stmt, 5, r.compiler) && bind_text(stmt, 6, r.detail);
        if (!bound || sqlite3_step(stmt) != SQLITE_DONE) {
            return fail(error_of(raw, pack));
        }
    }
    if (sqlite3_exec(raw, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
        return fail(error_of(raw, pack));
    }
    return Ok{};
}

Result<std::vector<CoverageRecord>, std::string> read_coverage(const std::filesystem::path& pack) {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(pack.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    DbPtr db(raw);
    if (rc != SQLITE_OK) {
        return fail(error_of(raw, pack));
    }
    sqlite3_stmt* stmt = nullptr;
    std::vector<CoverageRecord> records;
    if (sqlite3_prepare_v2(raw, kSelect, -1, &stmt, nullptr) != SQLITE_OK) {
        return records;  // no coverage table: a pack made by export, not prebuild
    }
    StmtPtr select(stmt);
    int step = SQLITE_ROW;
    while ((step = sqlite3_step(stmt)) == SQLITE_ROW) {
        records.push_back(CoverageRecord{
            column_text(stmt, 0), column_text(stmt, 1), status_from(column_text(stmt, 2)),
            split_ids(column_text(stmt, 3)), column_text(stmt, 4), column_text(stmt, 5)});
    }
    if (step != SQLITE_DONE) {
        return fail(error_of(raw, pack));
    }
    return records;
}

}  // namespace kcache::cli
