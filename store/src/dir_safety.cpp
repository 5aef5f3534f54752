#include "dir_safety.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "kcache/common/log.hpp"
#include "path_rules.hpp"

namespace kcache::store::files {
namespace fs = std::filesystem;
namespace {

StoreError io_error(const fs::path& p, const std::string& what, int err) {
    return {StoreErrc::io, p.string() + ": " + what + ": " + std::strerror(err)};
}

Status<StoreError> create_private_dir(const fs::path& dir) {
    std::error_code ec;
    if (dir.has_parent_path()) {
        fs::create_directories(dir.parent_path(), ec);
        if (ec) {
            return fail(io_error(dir.parent_path(), "cannot create", ec.value()));
        }
    }
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        return fail(io_error(dir, "cannot create the cache directory", errno));
    }
    return Ok{};
}

// Checks ownership and mode of the directory `dir` resolves to.
Status<StoreError> check_owner_and_mode(const fs::path& dir, const struct stat& st,
                                        const std::string& via) {
    if (!S_ISDIR(st.st_mode)) {
        return fail(StoreError{StoreErrc::unsafe_directory,
                               dir.string() + via +
                                   " is not a directory; point KCACHE_DIR at a "
                                   "directory"});
    }
    if (st.st_uid != ::geteuid()) {
        return fail(StoreError{StoreErrc::unsafe_directory,
                               "cache directory " + dir.string() + via + " is owned by uid " +
                                   std::to_string(st.st_uid) + ", not by you (uid " +
                                   std::to_string(::geteuid()) +
                                   "); another user could plant binaries there. Fix: use a "
                                   "directory you own "
                                   "(set KCACHE_DIR), or `chown " +
                                   std::to_string(::geteuid()) + " " + dir.string() + "`"});
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        return fail(StoreError{
            StoreErrc::unsafe_directory,
            "cache directory " + dir.string() + via + " is writable by group or others (mode " +
                octal_mode(st.st_mode) + "). Fix: `chmod 700 " + dir.string() + "`"});
    }
    return Ok{};
}

// Checks every existing ancestor of `dir` the way ssh and sudo check the
// directories above a secret: each must be owned by root or by us, and not
// writable by others unless sticky (as /tmp is). Otherwise whoever can write
// it could swap the cache directory for one of theirs.
Status<StoreError> check_ancestors(const fs::path& dir) {
    const auto bad = unsafe_ancestor(dir);
    if (!bad) {
        return Ok{};
    }
    const std::string p = bad->dir.string();
    if (bad->foreign_owner) {
        return fail(StoreError{StoreErrc::unsafe_directory,
                               "cache directory " + dir.string() + ": the directory above it, " +
                                   p + ", is owned by uid " + std::to_string(bad->st.st_uid) +
                                   ", who could replace the cache. Fix: set KCACHE_DIR to a "
                                   "directory under your home"});
    }
    return fail(StoreError{StoreErrc::unsafe_directory,
                           "cache directory " + dir.string() + ": the directory above it, " + p +
                               ", is writable by everyone and not sticky (mode " +
                               octal_mode(bad->st.st_mode) +
                               "), so anyone could replace the cache. Fix: `chmod o-w " + p +
                               "` (or `chmod +t`), or set KCACHE_DIR elsewhere"});
}

}  // namespace

Result<Writable, StoreError> prepare_cache_dir(const fs::path& dir) {
    if (auto ancestors = check_ancestors(dir); !ancestors.ok()) {
        return fail(ancestors.error());
    }
    struct stat lst {};
    if (::lstat(dir.c_str(), &lst) != 0) {
        if (errno != ENOENT) {
            return fail(io_error(dir, "cannot inspect the cache directory", errno));
        }
        auto made = create_private_dir(dir);
        if (!made.ok()) {
            return fail(made.error());
        }
    }
    std::string via;
    if (::lstat(dir.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
        std::error_code ec;
        via = " (a symlink to " + fs::canonical(dir, ec).string() + ")";
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
        return fail(io_error(dir, "cannot inspect the cache directory", errno));
    }
    auto safe = check_owner_and_mode(dir, st, via);
    if (!safe.ok()) {
        return fail(safe.error());
    }
    struct statvfs vfs {};
    if (::statvfs(dir.c_str(), &vfs) == 0 && (vfs.f_flag & ST_RDONLY) != 0) {
        return Writable::no;
    }
    return ::access(dir.c_str(), W_OK) == 0 ? Writable::yes : Writable::no;
}

Writable file_writable(const fs::path& path) {
    return ::access(path.c_str(), W_OK) == 0 ? Writable::yes : Writable::no;
}

std::string header_problem(sql::Db& conn, const fs::path& db) {
    auto size = conn.file_size();
    if (!size.ok()) {
        return {};  // unreadable is not "damaged": SQLite will report the real error
    }
    if (size.value() == 0) {
        return {};  // an empty file is a valid, empty database
    }
    std::array<unsigned char, 100> h{};
    if (size.value() < static_cast<std::int64_t>(h.size()) ||
        !conn.read_file(h.data(), static_cast<int>(h.size()), 0).ok()) {
        return "shorter than an SQLite header (" + std::to_string(size.value()) + " bytes)";
    }
    if (std::memcmp(h.data(), "SQLite format 3", 16) != 0) {
        return "not an SQLite database (bad magic)";
    }
    std::uint32_t page = (h[16] << 8) | h[17];
    if (page == 1) {
        page = 65536;
    }
    if (page < 512 || page > 65536 || (page & (page - 1)) != 0) {
        return "garbage header (page size " + std::to_string(page) + ")";
    }
    std::uint32_t pages = (std::uint32_t{h[28]} << 24) | (h[29] << 16) | (h[30] << 8) | h[31];
    std::uint32_t change = (std::uint32_t{h[24]} << 24) | (h[25] << 16) | (h[26] << 8) | h[27];
    std::uint32_t valid_for = (std::uint32_t{h[92]} << 24) | (h[93] << 16) | (h[94] << 8) | h[95];
    // The page count is trustworthy only when written by the same change (SQLite
    // file format, "in-header database size") and when no WAL may still hold
    // pages of an interrupted checkpoint.
    std::error_code ec;
    auto wal_size = fs::file_size(db.string() + "-wal", ec);
    bool wal_pending = !ec && wal_size > 0;
    if (!wal_pending && change == valid_for &&
        static_cast<std::uint64_t>(size.value()) < static_cast<std::uint64_t>(pages) * page) {
        return "truncated (" + std::to_string(size.value()) + " bytes, header says " +
               std::to_string(pages) + " pages of " + std::to_string(page) + ")";
    }
    return {};
}

Result<fs::path, StoreError> move_aside(const fs::path& db, const std::string& why) {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    std::array<char, 32> stamp{};
    std::strftime(stamp.data(), stamp.size(), "%Y%m%dT%H%M%SZ", &tm);
    fs::path target = db.string() + ".corrupt-" + stamp.data();
    for (int i = 1; fs::exists(target); ++i) {
        target = db.string() + ".corrupt-" + stamp.data() + "-" + std::to_string(i);
    }
    if (::rename(db.c_str(), target.c_str()) != 0) {
        return fail(io_error(db, "cannot move the damaged database aside", errno));
    }
    for (const char* suffix : {"-wal", "-shm"}) {
        fs::path companion = db.string() + suffix;
        fs::path moved = target.string() + suffix;
        if (::rename(companion.c_str(), moved.c_str()) != 0 && errno != ENOENT) {
            return fail(io_error(companion, "cannot move aside", errno));
        }
    }
    logging::warning(db.string() + " is damaged (" + why + "); moved it to " + target.string() +
                     " and started an empty store");
    return target;
}

}  // namespace kcache::store::files
