#pragma once
// RAII wrappers over SQLite: a connection owning a cache of prepared
// statements, statements whose every bind and step is checked, an immediate
// write transaction that rolls back unless committed, and retry with backoff
// on SQLITE_BUSY / SQLITE_LOCKED.

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "kcache/common/result.hpp"

namespace kcache::store::sql {

struct SqlError {
    int code = SQLITE_ERROR;  // primary result code
    std::string message;

    bool busy() const { return code == SQLITE_BUSY || code == SQLITE_LOCKED; }
    bool corrupt() const { return code == SQLITE_CORRUPT || code == SQLITE_NOTADB; }
};

template <class T>
using Res = Result<T, SqlError>;
using Stat = Status<SqlError>;

struct StmtDeleter {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
struct DbDeleter {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};

// One prepared statement. Binding indices are 1-based; column indices 0-based.
class Stmt {
  public:
    explicit Stmt(sqlite3_stmt* s) : s_(s) {}

    Stat bind(int i, std::int64_t v);
    Stat bind(int i, std::uint64_t v) { return bind(i, static_cast<std::int64_t>(v)); }
    Stat bind(int i, std::uint32_t v) { return bind(i, static_cast<std::int64_t>(v)); }
    Stat bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
    Stat bind(int i, std::string_view v);
    Stat bind(int i, std::span<const std::uint8_t> v);

    // Binds `args` to parameters 1, 2, … in order; stops at the first failure.
    template <class... A>
    Stat bind_all(const A&... args) {
        Stat st = Ok{};
        int i = 0;
        ((st.ok() ? (st = bind(++i, args), 0) : 0), ...);
        return st;
    }

    // Returns true when a row is ready, false when done.
    Res<bool> step();
    // Steps to completion, expecting no rows.
    Stat run();
    // Resets for reuse and clears bindings.
    void reset();

    std::int64_t int64(int col) const { return sqlite3_column_int64(s_.get(), col); }
    std::string text(int col) const;
    std::span<const std::uint8_t> blob(int col) const;
    bool is_null(int col) const { return sqlite3_column_type(s_.get(), col) == SQLITE_NULL; }
    sqlite3_stmt* get() const { return s_.get(); }

  private:
    SqlError error(int rc) const;
    std::unique_ptr<sqlite3_stmt, StmtDeleter> s_;
};

// A statement borrowed from a Db's cache; reset when the borrow ends.
class StmtRef {
  public:
    explicit StmtRef(Stmt* s) : s_(s) {}
    StmtRef(StmtRef&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    StmtRef(const StmtRef&) = delete;
    StmtRef& operator=(const StmtRef&) = delete;
    StmtRef& operator=(StmtRef&&) = delete;
    ~StmtRef() {
        if (s_) {
            s_->reset();
        }
    }
    Stmt* operator->() const { return s_; }
    Stmt& operator*() const { return *s_; }

  private:
    Stmt* s_;
};

// One connection with its prepared statements; move-only.
class Db {
  public:
    // Opens `uri` (a file: URI) with `flags` (SQLITE_OPEN_* | SQLITE_OPEN_URI added).
    static Res<Db> open(const std::string& uri, int flags, int busy_timeout_ms);
    // Opens `uri` read-only as a file from outside (a pack, an import), with
    // SQLite's defences on: SQLITE_DBCONFIG_DEFENSIVE, no trusted schema (no
    // functions with side effects from its views or triggers), cell size
    // checks (damaged b-tree cells are errors, not crashes) and query_only.
    static Res<Db> open_untrusted(const std::string& uri);

    // Returns the cached statement for `sql` (a string literal), preparing it once.
    Res<StmtRef> cached(const char* sql);
    // Prepares, runs and finalizes a statement without parameters or rows.
    Stat exec(std::string_view sql);
    // Runs a statement without parameters and returns its first column of the first row.
    Res<std::int64_t> query_int(std::string_view sql);
    // Size of the main database file, and `n` bytes of it at `offset` (an
    // error past its end), read through the descriptor SQLite holds: kcache
    // opens no descriptor of its own on a database file, since closing one
    // would drop every POSIX lock this process holds on it (docs/design.md,
    // "Storage").
    Res<std::int64_t> file_size();
    Stat read_file(void* out, int n, std::int64_t offset);
    // Number of rows changed by the last statement.
    std::int64_t changes() const { return sqlite3_changes64(db_.get()); }
    sqlite3* get() const { return db_.get(); }
    SqlError error(int rc) const;

  private:
    std::unique_ptr<sqlite3, DbDeleter> db_;
    std::unordered_map<const char*, std::unique_ptr<Stmt>> cache_;
};

// BEGIN IMMEDIATE … COMMIT; rolls back in the destructor unless committed.
class Transaction {
  public:
    static Res<Transaction> begin(Db& db);
    Transaction(Transaction&& o) noexcept : db_(std::exchange(o.db_, nullptr)) {}
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    Transaction& operator=(Transaction&&) = delete;
    ~Transaction();
    Stat commit();

  private:
    explicit Transaction(Db* db) : db_(db) {}
    Db* db_;
};

struct RetryPolicy {
    int retries = 8;
    int backoff_ms = 10;
};

// Sleeps before retry `attempt` (0-based): backoff doubling, with jitter.
void backoff_sleep(const RetryPolicy& policy, int attempt);

// Runs `f` (returning Res<T>) again while it fails with busy/locked, backing off.
template <class F>
auto with_retry(const RetryPolicy& policy, F&& f) -> decltype(f()) {
    for (int attempt = 0;; ++attempt) {
        auto r = f();
        if (r.ok() || !r.error().busy() || attempt >= policy.retries) {
            return r;
        }
        backoff_sleep(policy, attempt);
    }
}

// Returns `path` as a file: URI with `query` appended ("mode=ro", "immutable=1", …).
std::string file_uri(const std::string& path, std::string_view query);

}  // namespace kcache::store::sql
