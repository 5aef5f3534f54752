#include "sqlite.hpp"

#include <random>

#include "kcache/common/hex.hpp"
#include "kcache/common/work.hpp"

namespace kcache::store::sql {

SqlError Stmt::error(int rc) const {
    sqlite3* db = sqlite3_db_handle(s_.get());
    return SqlError{rc & 0xff,
                    std::string(sqlite3_errmsg(db)) + " (in: " + sqlite3_sql(s_.get()) + ")"};
}

Stat Stmt::bind(int i, std::int64_t v) {
    int rc = sqlite3_bind_int64(s_.get(), i, v);
    if (rc != SQLITE_OK) {
        return fail(error(rc));
    }
    return Ok{};
}

Stat Stmt::bind(int i, std::string_view v) {
    int rc = sqlite3_bind_text64(s_.get(), i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    if (rc != SQLITE_OK) {
        return fail(error(rc));
    }
    return Ok{};
}

Stat Stmt::bind(int i, std::span<const std::uint8_t> v) {
    // A zero-length blob must still be a blob, not NULL: pass a non-null pointer.
    static const std::uint8_t kEmpty = 0;
    const void* p = v.empty() ? &kEmpty : v.data();
    int rc = sqlite3_bind_blob64(s_.get(), i, p, v.size(), SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) {
        return fail(error(rc));
    }
    return Ok{};
}

Res<bool> Stmt::step() {
    int rc = sqlite3_step(s_.get());
    if (rc == SQLITE_ROW) {
        return true;
    }
    if (rc == SQLITE_DONE) {
        return false;
    }
    return fail(error(rc));
}

Stat Stmt::run() {
    auto r = step();
    if (!r.ok()) {
        return fail(r.error());
    }
    if (r.value()) {
        return fail(SqlError{SQLITE_MISUSE,
                             std::string("statement returned a row: ") + sqlite3_sql(s_.get())});
    }
    return Ok{};
}

void Stmt::reset() {
    // The result code repeats the last step's error, already reported there.
    (void)sqlite3_reset(s_.get());
    (void)sqlite3_clear_bindings(s_.get());
}

std::string Stmt::text(int col) const {
    const unsigned char* p = sqlite3_column_text(s_.get(), col);
    int n = sqlite3_column_bytes(s_.get(), col);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n))
             : std::string();
}

std::span<const std::uint8_t> Stmt::blob(int col) const {
    const void* p = sqlite3_column_blob(s_.get(), col);
    int n = sqlite3_column_bytes(s_.get(), col);
    if (p == nullptr || n <= 0) {
        return {};
    }
    return {static_cast<const std::uint8_t*>(p), static_cast<std::size_t>(n)};
}

SqlError Db::error(int rc) const {
    return SqlError{rc & 0xff, db_ ? sqlite3_errmsg(db_.get()) : sqlite3_errstr(rc)};
}

Res<Db> Db::open(const std::string& uri, int flags, int busy_timeout_ms) {
    sqlite3* raw = nullptr;
    int rc = sqlite3_open_v2(uri.c_str(), &raw, flags | SQLITE_OPEN_URI, nullptr);
    Db db;
    db.db_.reset(raw);  // owned even on failure: sqlite3_open_v2 may allocate a handle
    if (rc != SQLITE_OK) {
        return fail(db.error(rc));
    }
    sqlite3_extended_result_codes(raw, 0);
    rc = sqlite3_busy_timeout(raw, busy_timeout_ms);
    if (rc != SQLITE_OK) {
        return fail(db.error(rc));
    }
    return db;
}

Res<Db> Db::open_untrusted(const std::string& uri) {
    auto opened = open(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, 0);
    if (!opened.ok()) {
        return opened;
    }
    Db db = std::move(opened).value();
    sqlite3* raw = db.db_.get();
    for (int option : {SQLITE_DBCONFIG_DEFENSIVE, SQLITE_DBCONFIG_TRUSTED_SCHEMA}) {
        const int value = option == SQLITE_DBCONFIG_DEFENSIVE ? 1 : 0;
        if (int rc = sqlite3_db_config(raw, option, value, nullptr); rc != SQLITE_OK) {
            return fail(db.error(rc));
        }
    }
    auto st = db.exec(
        "PRAGMA trusted_schema = OFF; PRAGMA cell_size_check = ON; "
        "PRAGMA query_only = ON;");
    if (!st.ok()) {
        return fail(st.error());
    }
    return db;
}

Res<StmtRef> Db::cached(const char* sql) {
    auto it = cache_.find(sql);
    if (it == cache_.end()) {
        sqlite3_stmt* raw = nullptr;
        int rc = sqlite3_prepare_v3(db_.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
        if (rc != SQLITE_OK) {
            sqlite3_finalize(raw);
            return fail(
                SqlError{rc & 0xff, std::string(sqlite3_errmsg(db_.get())) + " in: " + sql});
        }
        it = cache_.emplace(sql, std::make_unique<Stmt>(raw)).first;
    }
    return StmtRef(it->second.get());
}

Stat Db::exec(std::string_view sql) {
    // Runs each statement of `sql` in turn (DDL scripts hold several).
    const char* p = sql.data();
    const char* end = sql.data() + sql.size();
    while (p < end) {
        sqlite3_stmt* raw = nullptr;
        const char* tail = nullptr;
        int rc = sqlite3_prepare_v2(db_.get(), p, static_cast<int>(end - p), &raw, &tail);
        if (rc != SQLITE_OK) {
            sqlite3_finalize(raw);
            return fail(error(rc));
        }
        if (raw == nullptr) {  // whitespace or comment only
            break;
        }
        Stmt stmt(raw);
        for (;;) {
            auto r = stmt.step();
            if (!r.ok()) {
                return fail(r.error());
            }
            if (!r.value()) {
                break;
            }
        }
        p = tail;
    }
    return Ok{};
}

Res<std::int64_t> Db::query_int(std::string_view sql) {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(db_.get(), sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(raw);
        return fail(error(rc));
    }
    Stmt stmt(raw);
    auto r = stmt.step();
    if (!r.ok()) {
        return fail(r.error());
    }
    return r.value() ? stmt.int64(0) : std::int64_t{0};
}

namespace {

// The main database file as SQLite holds it open, or null when it is not open.
sqlite3_file* main_file(sqlite3* db) {
    sqlite3_file* file = nullptr;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK ||
        file == nullptr || file->pMethods == nullptr) {
        return nullptr;
    }
    return file;
}

}  // namespace

Res<std::int64_t> Db::file_size() {
    sqlite3_file* file = main_file(db_.get());
    sqlite3_int64 size = 0;
    const int rc = file ? file->pMethods->xFileSize(file, &size) : SQLITE_CANTOPEN;
    if (rc != SQLITE_OK) {
        return fail(SqlError{rc & 0xff, "cannot read the database file's size"});
    }
    return std::int64_t{size};
}

Stat Db::read_file(void* out, int n, std::int64_t offset) {
    sqlite3_file* file = main_file(db_.get());
    const int rc = file ? file->pMethods->xRead(file, out, n, offset) : SQLITE_CANTOPEN;
    if (rc != SQLITE_OK) {  // SQLITE_IOERR_SHORT_READ past the end
        return fail(SqlError{rc & 0xff, "cannot read the database file"});
    }
    return Ok{};
}

Res<Transaction> Transaction::begin(Db& db) {
    auto st = db.exec("BEGIN IMMEDIATE");
    if (!st.ok()) {
        return fail(st.error());
    }
    return Transaction(&db);
}

Transaction::~Transaction() {
    if (db_ != nullptr) {
        // Rolling back may itself fail only when no transaction is open any more.
        (void)db_->exec("ROLLBACK");
    }
}

Stat Transaction::commit() {
    auto st = db_->exec("COMMIT");
    if (st.ok()) {
        db_ = nullptr;
    }
    return st;
}

void backoff_sleep(const RetryPolicy& policy, int attempt) {
    thread_local std::minstd_rand rng([] {
        work::add(work::Item::random_draws);
        return std::random_device{}();
    }());
    int base = policy.backoff_ms << std::min(attempt, 10);
    std::uniform_int_distribution<int> jitter(0, std::max(1, base / 2));
    std::this_thread::sleep_for(std::chrono::milliseconds(base + jitter(rng)));
}

std::string file_uri(const std::string& path, std::string_view query) {
    std::string out = "file:";
    for (unsigned char c : path) {
        if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f) {
            out += '%' + to_hex(&c, 1);
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    if (!query.empty()) {
        out.push_back('?');
        out.append(query);
    }
    return out;
}

}  // namespace kcache::store::sql
