// The AOT coverage table of packs (coverage.hpp).

#include "kcache/store/coverage.hpp"

#include <cstdio>
#include <cstdlib>

#include "coverage_table.hpp"
#include "kcache/store/pack.hpp"
#include "schema.hpp"

namespace kcache::store {
namespace {

constexpr const char* kCreate =
    "CREATE TABLE IF NOT EXISTS kcache_aot_coverage(family TEXT PRIMARY KEY, "
    "ocloc_target TEXT NOT NULL, status TEXT NOT NULL, pci_ids TEXT NOT NULL, "
    "compiler TEXT NOT NULL, detail TEXT NOT NULL)";
constexpr const char* kInsert = "INSERT OR REPLACE INTO kcache_aot_coverage VALUES(?,?,?,?,?,?)";
constexpr const char* kHasTable =
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'kcache_aot_coverage'";
constexpr const char* kSelect =
    "SELECT family, ocloc_target, status, pci_ids, compiler, detail FROM kcache_aot_coverage "
    "ORDER BY family";

std::string join_ids(const std::vector<std::uint32_t>& ids) {
    std::string out;
    for (std::uint32_t id : ids) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "0x%04x", id);
        out += (out.empty() ? "" : ",") + std::string(buf);
    }
    return out;
}

// Parses "0x7d55,0x7d45"; nullopt on anything else (empty text: no ids).
std::optional<std::vector<std::uint32_t>> split_ids(const std::string& text) {
    std::vector<std::uint32_t> ids;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find(',', start);
        end = end == std::string::npos ? text.size() : end;
        const std::string item = text.substr(start, end - start);
        char* stop = nullptr;
        const unsigned long v = std::strtoul(item.c_str(), &stop, 16);
        if (item.size() < 3 || item.size() > 10 || item.compare(0, 2, "0x") != 0 ||
            stop != item.c_str() + item.size()) {
            return std::nullopt;
        }
        ids.push_back(static_cast<std::uint32_t>(v));
        start = end + 1;
    }
    return ids;
}

}  // namespace

const char* to_string(CoverageStatus status) {
    switch (status) {
        case CoverageStatus::covered:
            return "covered";
        case CoverageStatus::not_targetable:
            return "not_targetable";
        case CoverageStatus::failed:
            break;
    }
    return "failed";
}

std::optional<CoverageStatus> parse_coverage_status(std::string_view text) {
    for (auto s :
         {CoverageStatus::covered, CoverageStatus::not_targetable, CoverageStatus::failed}) {
        if (text == to_string(s)) {
            return s;
        }
    }
    return std::nullopt;
}

namespace coverage {

Result<std::vector<AotCoverage>, StoreError> read_table(sql::Db& db, const std::string& path) {
    std::vector<AotCoverage> out;
    auto has = db.query_int(kHasTable);
    if (!has.ok()) {
        return fail(schema::to_store_error(has.error(), path));
    }
    if (has.value() == 0) {
        return out;  // a pack made by export, not prebuild
    }
    auto stmt = db.cached(kSelect);
    for (;;) {
        auto row = stmt.ok() ? stmt.value()->step() : sql::Res<bool>(fail(stmt.error()));
        if (!row.ok()) {
            return fail(schema::to_store_error(row.error(), path));
        }
        if (!row.value()) {
            return out;
        }
        const sql::Stmt& s = *stmt.value();
        auto status = parse_coverage_status(s.text(2));
        auto ids = split_ids(s.text(3));
        if (!status || !ids) {
            std::string what =
                path + ": kcache_aot_coverage row of family '" + s.text(0) + "' has " +
                (!status ? "status '" + s.text(2) + "'" : "pci_ids '" + s.text(3) + "'") +
                ", which this kcache does not understand";
            stmt.value()->reset();
            return fail(StoreError{StoreErrc::corrupt, std::move(what)});
        }
        out.push_back(
            AotCoverage{s.text(0), s.text(1), *status, std::move(*ids), s.text(4), s.text(5)});
    }
}

}  // namespace coverage

Status<StoreError> write_aot_coverage(const std::filesystem::path& pack,
                                      const std::vector<AotCoverage>& records) {
    const std::string p = pack.string();
    for (const AotCoverage& r : records) {
        if (r.family.empty()) {
            return fail(StoreError{StoreErrc::invalid_argument,
                                   p + ": a coverage record needs a family name"});
        }
    }
    return schema::write_in_transaction(p, [&](sql::Db& db) {
        sql::Stat st = db.exec(kCreate);
        for (const AotCoverage& r : records) {
            if (!st.ok()) {
                break;
            }
            auto insert = db.cached(kInsert);
            st = insert.ok() ? insert.value()->bind_all(
                                   std::string_view(r.family), std::string_view(r.ocloc_target),
                                   std::string_view(to_string(r.status)),
                                   std::string_view(join_ids(r.pci_ids)),
                                   std::string_view(r.compiler), std::string_view(r.detail))
                             : sql::Stat(fail(insert.error()));
            if (st.ok()) {
                st = insert.value()->run();
            }
        }
        return st;
    });
}

Result<std::vector<AotCoverage>, StoreError> read_aot_coverage(const std::filesystem::path& pack) {
    auto opened = Pack::open(pack);
    if (!opened.ok()) {
        return fail(opened.error());
    }
    return opened->aot_coverage();
}

}  // namespace kcache::store
