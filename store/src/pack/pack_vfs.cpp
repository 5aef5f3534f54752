// The "kcache-pinned" VFS (pack_vfs.hpp). A pack is immutable: no locks, no
// journal, no shared memory, so its file needs only reads and its size.

#include "pack_vfs.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <mutex>

#include "kcache/common/work.hpp"
#include "sqlite.hpp"

namespace kcache::store::pinned {
namespace {

constexpr const char* kVfsName = "kcache-pinned";
constexpr const char* kFdParameter = "kcache_fd";

struct PinnedFile {
    sqlite3_file base;
    int fd;
};

int fd_of(sqlite3_file* f) {
    return reinterpret_cast<PinnedFile*>(f)->fd;
}

int close_file(sqlite3_file* f) {
    ::close(fd_of(f));
    return SQLITE_OK;
}

// Reads `amount` bytes at `offset`; a read past the end fills the rest with
// zeros and says so, as SQLite expects of every VFS.
int read_file(sqlite3_file* f, void* out, int amount, sqlite3_int64 offset) {
    auto* p = static_cast<unsigned char*>(out);
    std::size_t left = static_cast<std::size_t>(amount);
    while (left > 0) {
        const ssize_t n = ::pread(fd_of(f), p, left, static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return SQLITE_IOERR_READ;
        }
        if (n == 0) {
            std::memset(p, 0, left);
            return SQLITE_IOERR_SHORT_READ;
        }
        work::add(work::Item::bytes_read, static_cast<std::uint64_t>(n));
        p += n;
        offset += n;
        left -= static_cast<std::size_t>(n);
    }
    return SQLITE_OK;
}

int refuse_write(sqlite3_file*, const void*, int, sqlite3_int64) {
    return SQLITE_READONLY;
}
int refuse_truncate(sqlite3_file*, sqlite3_int64) {
    return SQLITE_READONLY;
}
int sync_nothing(sqlite3_file*, int) {
    return SQLITE_OK;
}
int file_size(sqlite3_file* f, sqlite3_int64* size) {
    struct stat st {};
    if (::fstat(fd_of(f), &st) != 0) {
        return SQLITE_IOERR_FSTAT;
    }
    *size = st.st_size;
    return SQLITE_OK;
}
// Immutable: no lock is ever needed (and none is taken, so no other
// descriptor of the file can drop one).
int lock_nothing(sqlite3_file*, int) {
    return SQLITE_OK;
}
int no_reserved_lock(sqlite3_file*, int* out) {
    *out = 0;
    return SQLITE_OK;
}
int no_file_control(sqlite3_file*, int, void*) {
    return SQLITE_NOTFOUND;
}
int sector_size(sqlite3_file*) {
    return 4096;
}
int characteristics(sqlite3_file*) {
    return SQLITE_IOCAP_IMMUTABLE;
}

const sqlite3_io_methods kMethods = {
    1,
    close_file,
    read_file,
    refuse_write,
    refuse_truncate,
    sync_nothing,
    file_size,
    lock_nothing,
    lock_nothing,
    no_reserved_lock,
    no_file_control,
    sector_size,
    characteristics,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

sqlite3_vfs* default_vfs = nullptr;
sqlite3_vfs pinned_vfs{};

// The main database of a URI that names a descriptor: a duplicate of that
// descriptor, read-only. Anything else: the default VFS.
int open_file(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* out_flags) {
    const char* fd_text = (flags & SQLITE_OPEN_MAIN_DB) != 0 && name != nullptr
                              ? sqlite3_uri_parameter(name, kFdParameter)
                              : nullptr;
    if (fd_text == nullptr) {
        return default_vfs->xOpen(default_vfs, name, file, flags, out_flags);
    }
    file->pMethods = nullptr;
    int fd = -1;
    const char* end = fd_text + std::strlen(fd_text);
    if (std::from_chars(fd_text, end, fd).ptr != end || fd < 0 ||
        (flags & (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) != 0) {
        return SQLITE_CANTOPEN;
    }
    const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) {
        return SQLITE_CANTOPEN;
    }
    auto* pinned = reinterpret_cast<PinnedFile*>(file);
    pinned->fd = own;
    pinned->base.pMethods = &kMethods;
    if (out_flags != nullptr) {
        *out_flags = SQLITE_OPEN_READONLY;
    }
    return SQLITE_OK;
}

void register_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        default_vfs = sqlite3_vfs_find(nullptr);
        pinned_vfs = *default_vfs;  // names, time, randomness: the default's
        pinned_vfs.pNext = nullptr;
        pinned_vfs.zName = kVfsName;
        pinned_vfs.szOsFile = std::max(default_vfs->szOsFile, static_cast<int>(sizeof(PinnedFile)));
        pinned_vfs.xOpen = open_file;
        sqlite3_vfs_register(&pinned_vfs, 0);
    });
}

}  // namespace

std::string uri(const std::string& name, int fd) {
    register_once();
    return sql::file_uri(name, std::string("vfs=") + kVfsName + "&" + kFdParameter + "=" +
                                   std::to_string(fd) + "&immutable=1");
}

}  // namespace kcache::store::pinned
