// Store::open: directory safety, damaged-file recovery, read-only fallback,
// schema creation and migration.

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>

#include "dir_safety.hpp"
#include "hot/hot_copies.hpp"
#include "kcache/common/log.hpp"
#include "kcache/common/unique_fd.hpp"
#include "kcache/common/work.hpp"
#include "store_impl.hpp"

namespace kcache::store {
namespace fs = std::filesystem;
namespace {

Result<sql::Db, StoreError> open_read_only(const fs::path& db_path, const Policy& policy) {
    const std::string path = db_path.string();
    std::error_code ec;
    if (!fs::exists(db_path, ec)) {
        return fail(StoreError{StoreErrc::read_only,
                               path + ": no store here, and it cannot be created read-only"});
    }
    // mode=ro needs the WAL index (-shm) to exist or be creatable; in a
    // read-only directory fall back to immutable=1 (no locks, no WAL).
    for (const char* query : {"mode=ro", "immutable=1"}) {
        work::add(work::Item::files_opened);
        auto db = sql::Db::open(sql::file_uri(path, query),
                                SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, policy.busy_timeout_ms);
        if (!db.ok()) {
            continue;
        }
        auto st = schema::check_readable(db.value(), path);
        if (st.ok()) {
            return std::move(db).value();
        }
        if (st.error().code == StoreErrc::schema_too_new ||
            st.error().code == StoreErrc::schema_too_old || st.error().code == StoreErrc::foreign ||
            st.error().code == StoreErrc::corrupt) {
            return fail(st.error());
        }
    }
    return fail(StoreError{StoreErrc::io, path + ": cannot be opened read-only"});
}

enum class Creating { no, yes };

// One attempt at opening `db_path` writable and migrating its schema; when
// `mode` is Creating::yes the file is new and private, and gets the schema.
Result<sql::Db, StoreError> open_writable_once(const fs::path& db_path, const Policy& policy,
                                               const sql::RetryPolicy& retry,
                                               Creating mode = Creating::no) {
    const std::string path = db_path.string();
    // Only a private new file is created here: an existing store opened
    // without SQLITE_OPEN_CREATE, so one moved away since it was seen is a
    // failure, never an empty database left where the store belongs.
    const int create = mode == Creating::yes ? SQLITE_OPEN_CREATE : 0;
    work::add(work::Item::files_opened);
    auto opened =
        sql::Db::open(sql::file_uri(path, ""), SQLITE_OPEN_READWRITE | create | SQLITE_OPEN_NOMUTEX,
                      policy.busy_timeout_ms);
    if (!opened.ok()) {
        return fail(schema::to_store_error(opened.error(), path));
    }
    sql::Db db = std::move(opened).value();
    if (mode == Creating::no) {
        // Through this connection: a descriptor of kcache's own, closed while
        // another connection of this process is open, would drop its locks.
        if (std::string problem = files::header_problem(db, db_path); !problem.empty()) {
            return fail(StoreError{StoreErrc::corrupt, std::move(problem)});
        }
    }
    // Read the version before any pragma writes, so a newer file stays untouched.
    auto version = sql::with_retry(retry, [&] { return schema::read_version(db); });
    if (!version.ok()) {
        return fail(schema::to_store_error(version.error(), path));
    }
    if (version.value() > schema::kCurrentVersion) {
        return fail(schema::too_new(version.value(), path));
    }
    // kcache publishes a store file only with its schema (create_store_file):
    // a file without one is someone else's, or empty, and is never adopted.
    if (version.value() == 0 && mode != Creating::yes) {
        return fail(schema::not_a_store(db, path));
    }
    std::string pragmas = "PRAGMA synchronous = ";
    pragmas += policy.durability == Durability::full ? "FULL;" : "NORMAL;";
    if (version.value() == 0) {
        pragmas += "PRAGMA auto_vacuum = INCREMENTAL;";
    }
    pragmas += "PRAGMA journal_mode = WAL;";
    auto st = sql::with_retry(retry, [&] { return db.exec(pragmas); });
    if (!st.ok()) {
        return fail(schema::to_store_error(st.error(), path));
    }
    if (version.value() == schema::kCurrentVersion) {
        return db;  // the common case: nothing to create or migrate, no second read
    }
    auto ensured = schema::ensure_current(db, path, retry);
    if (!ensured.ok()) {
        return fail(ensured.error());
    }
    return db;
}

// Creates the store file at `db_path` unless one exists, race-free between
// processes: the schema is written into a private file beside it, which is
// then hard-linked into place (link fails if another process won; its file is
// then used). So `db_path` never exists without its schema.
Status<StoreError> create_store_file(const fs::path& db_path, const Policy& policy,
                                     const sql::RetryPolicy& retry) {
    std::string tmp = db_path.string() + ".new-XXXXXX";
    UniqueFd fd(::mkstemp(tmp.data()));
    if (!fd.valid()) {
        return fail(StoreError{
            StoreErrc::io,
            db_path.parent_path().string() + ": cannot create a file: " + std::strerror(errno)});
    }
    fd.reset();
    struct Cleanup {
        std::string path;
        ~Cleanup() {
            for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
                ::unlink((path + suffix).c_str());
            }
        }
    } cleanup{tmp};
    {
        auto db = open_writable_once(tmp, policy, retry, Creating::yes);
        if (!db.ok()) {
            return fail(db.error());
        }
        // Leaving this scope closes the only connection: SQLite checkpoints the
        // WAL into the file, so the linked file is complete on its own.
    }
    // Its inode may be that of a store file removed earlier: no hot copy of
    // that one may be taken for this one's.
    hot::clear_for_new_file(db_path.parent_path(), tmp);
    if (::link(tmp.c_str(), db_path.c_str()) != 0 && errno != EEXIST) {
        return fail(StoreError{StoreErrc::io, db_path.string() + ": cannot create the store: " +
                                                  std::strerror(errno)});
    }
    return Ok{};
}

// Opens the store file, creating it first where there is none. A file that
// goes (moved away by another process) between the two is created again: a
// few times, then the open fails with what was found.
Result<sql::Db, StoreError> open_or_create(const fs::path& db_path, const Policy& policy,
                                           const sql::RetryPolicy& retry) {
    constexpr int kTries = 3;
    for (int tried = 1;; ++tried) {
        std::error_code ec;
        if (!fs::exists(db_path, ec)) {
            if (auto made = create_store_file(db_path, policy, retry); !made.ok()) {
                return fail(made.error());
            }
        }
        auto db = open_writable_once(db_path, policy, retry);
        if (db.ok() || fs::exists(db_path, ec)) {
            return db;
        }
        if (tried == kTries) {
            return fail(StoreError{StoreErrc::io,
                                   db_path.string() +
                                       " was gone each time it was opened (moved away by another "
                                       "program, or a link to a missing file): " +
                                       db.error().message});
        }
    }
}

// Opens writable; a damaged file (its header, or what SQLite finds) is moved
// aside once and replaced by a fresh store.
Result<sql::Db, StoreError> open_writable(const fs::path& db_path, const Policy& policy,
                                          const sql::RetryPolicy& retry) {
    auto db = open_or_create(db_path, policy, retry);
    if (db.ok() || db.error().code != StoreErrc::corrupt) {
        return db;
    }
    auto moved = files::move_aside(db_path, db.error().message);
    if (!moved.ok()) {
        return fail(moved.error());
    }
    return open_or_create(db_path, policy, retry);
}

}  // namespace

TimeMs now_ms(const Policy& policy) {
    if (policy.clock) {
        return policy.clock();
    }
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

Result<Store, StoreError> Store::open(const fs::path& dir, Policy policy) {
    auto writable = files::prepare_cache_dir(dir);
    if (!writable.ok()) {
        return fail(writable.error());
    }
    const fs::path db_path = dir / kStoreFileName;
    std::error_code ec;
    OpenMode mode = policy.mode;
    if (mode == OpenMode::read_write &&
        (writable.value() == files::Writable::no ||
         (fs::exists(db_path, ec) && files::file_writable(db_path) == files::Writable::no))) {
        logging::warning(db_path.string() + " cannot be written: opened read-only, puts will fail");
        mode = OpenMode::read_only;
    }
    auto start = [&](sql::Db db) {
        auto impl = std::make_unique<Impl>(dir, db_path, std::move(policy), mode, std::move(db));
        impl->pending.name = "user";
        impl->last_flush_ms = impl->now();
        return impl;
    };
    // A store file stamped by an earlier writable open of this kcache: its
    // schema is current, so SQLite can wait until something needs it.
    if (policy.defer_open && mode == OpenMode::read_write) {
        hot::Secret secret{};
        if (fs::path hot = hot::stamped_dir(dir, db_path, &secret); !hot.empty()) {
            auto impl = start(sql::Db{});
            impl->hot_dir = std::move(hot);
            impl->hot_secret = secret;
            return Store(std::move(impl));
        }
    }
    sql::RetryPolicy retry{policy.busy_retries, policy.retry_backoff_ms};
    auto db = mode == OpenMode::read_only ? open_read_only(db_path, policy)
                                          : open_writable(db_path, policy, retry);
    if (!db.ok()) {
        return fail(db.error());
    }
    auto impl = start(std::move(db).value());
    if (auto attached = impl->attach_hot_copies(); !attached.ok()) {
        return fail(attached.error());
    }
    return Store(std::move(impl));
}

void Store::open_in_background() {
    Impl& s = *impl_;
    std::lock_guard lock(s.mu);
    if (s.db.get() != nullptr || s.opening.joinable() || s.opened_early ||
        s.mode != OpenMode::read_write) {
        return;
    }
    try {
        // Copies of what the open reads: the thread touches no guarded state.
        s.opening =
            std::thread([&slot = s.opened_early, path = s.db_path, policy = s.policy,
                         retry = s.retry] { slot.emplace(open_writable(path, policy, retry)); });
    } catch (const std::system_error&) {
        // No thread: opened at the first need, as without this call.
    }
}

Status<StoreError> Store::Impl::ensure_open_locked() {
    if (db.get() != nullptr) {
        return Ok{};
    }
    if (opening.joinable()) {
        opening.join();
    }
    // What the background open found; when it failed (busy, say), the open
    // is tried again now, so that its verdict is current.
    std::optional<Result<sql::Db, StoreError>> early = std::move(opened_early);
    opened_early.reset();
    auto opened = early && early->ok() ? std::move(*early) : open_writable(db_path, policy, retry);
    if (!opened.ok()) {
        const StoreErrc code = opened.error().code;
        if (code == StoreErrc::schema_too_new || code == StoreErrc::foreign) {
            // Not this kcache's store any more: no copy answers for it, and
            // the next open refuses it at once.
            hot::unstamp(hot_dir);
            hot_dir.clear();
        }
        return fail(opened.error());
    }
    db = std::move(opened).value();
    if (auto attached = attach_hot_copies(); !attached.ok()) {
        db = sql::Db{};  // never used without the trigger that keeps hot copies true
        return attached;
    }
    return Ok{};
}

Status<StoreError> Store::Impl::ensure_open() {
    std::lock_guard lock(mu);
    return ensure_open_locked();
}

namespace {

// SQL function kcache_hot_forget(key hex): removes the entry's hot copy.
void hot_forget(sqlite3_context* ctx, int, sqlite3_value** argv) {
    auto* s = static_cast<Store::Impl*>(sqlite3_user_data(ctx));
    if (const unsigned char* key = sqlite3_value_text(argv[0])) {
        // A store whose copies could not be set up in this process still
        // removes those another process keeps.
        hot::forget(s->hot_dir.empty() ? hot::stamped_dir(s->dir, s->db_path) : s->hot_dir,
                    reinterpret_cast<const char*>(key));
    }
    sqlite3_result_null(ctx);
}

}  // namespace

Status<StoreError> Store::Impl::attach_hot_copies() {
    if (mode == OpenMode::read_only) {
        return Ok{};
    }
    // A store file stamped at a deferred open has its copies' folder and
    // secret already, read then: only a store opened at once sets them up.
    if (hot_dir.empty()) {
        hot_dir = hot::set_up(dir, db_path, hot_secret);
    }
    hot_tally = {};
    // DIRECTONLY: callable from this connection's TEMP trigger, never from
    // anything stored in the database file.
    const int rc = sqlite3_create_function_v2(db.get(), "kcache_hot_forget", 1,
                                              SQLITE_UTF8 | SQLITE_DIRECTONLY, this, hot_forget,
                                              nullptr, nullptr, nullptr);
    sql::Stat st = rc == SQLITE_OK ? sql::Stat(Ok{}) : sql::Stat(fail(db.error(rc)));
    if (st.ok()) {
        st = db.exec(
            "CREATE TEMP TRIGGER IF NOT EXISTS entries_hot_forget AFTER DELETE ON main.entries "
            "BEGIN SELECT kcache_hot_forget(OLD.key); END;");
    }
    if (!st.ok()) {
        return fail(error(st.error()));
    }
    if (take_handovers_locked()) {
        (void)flush_locked();  // written now, so that SQLite's last-use times are true (gc)
    }
    return Ok{};
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;

Store::~Store() {
    if (impl_) {
        std::lock_guard lock(impl_->mu);
        // A connection that never opened is not opened to write back: the
        // write-back goes to a file the next open takes in (hot/handover.hpp).
        // Otherwise best effort: a failed write-back only loses last-use
        // times and counters.
        if (!impl_->hand_over_locked()) {
            (void)impl_->flush_locked();
        }
    }
}

OpenMode Store::mode() const {
    return impl_->mode;
}
const fs::path& Store::path() const {
    return impl_->db_path;
}

Status<StoreError> Store::flush() {
    if (auto open = impl_->ensure_open(); !open.ok()) {
        return fail(open.error());
    }
    std::lock_guard lock(impl_->mu);
    auto st = impl_->flush_locked();
    if (!st.ok()) {
        return fail(impl_->error(st.error()));
    }
    return Ok{};
}

}  // namespace kcache::store
