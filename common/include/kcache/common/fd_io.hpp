#pragma once
// Whole transfers through a file descriptor: the one loop that retries short
// writes and reads and EINTR, for every writer of a file or pipe and every
// positioned reader.

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

#include "kcache/common/work.hpp"

namespace kcache {

// Writes all `n` bytes of `data` to `fd`; false on an error (errno set) or
// when nothing more can be written.
inline bool write_all(int fd, const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    while (n > 0) {
        const ssize_t done = ::write(fd, p, n);
        if (done < 0 && errno == EINTR) {
            continue;
        }
        if (done <= 0) {
            return false;
        }
        p += done;
        n -= static_cast<std::size_t>(done);
    }
    return true;
}

// Reads exactly the bytes the `count` buffers of `iov` have room for, in
// order, from offset `at` of `fd`: one call for a file in the page cache.
// False on an error or when the file ends first. `iov` is consumed (its
// entries are advanced past what was read).
inline bool preadv_all(int fd, struct iovec* iov, int count, off_t at) {
    for (;;) {
        while (count > 0 && iov->iov_len == 0) {
            ++iov;
            --count;
        }
        if (count == 0) {
            return true;
        }
        const ssize_t got = ::preadv(fd, iov, count, at);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return false;
        }
        work::add(work::Item::bytes_read, static_cast<std::uint64_t>(got));
        at += got;
        for (auto left = static_cast<std::size_t>(got); left > 0 && count > 0;) {
            const std::size_t step = left < iov->iov_len ? left : iov->iov_len;
            iov->iov_base = static_cast<unsigned char*>(iov->iov_base) + step;
            iov->iov_len -= step;
            left -= step;
            if (iov->iov_len == 0) {
                ++iov;
                --count;
            }
        }
    }
}

// Reads exactly `n` bytes of `fd` from offset `at` into `buf`; false on an
// error or when the file ends first.
inline bool pread_all(int fd, void* buf, std::size_t n, off_t at) {
    struct iovec one {
        buf, n
    };
    return preadv_all(fd, &one, 1, at);
}

}  // namespace kcache
