#pragma once
// The one way to read a whole file named by outside data (config file,
// manifest and its sources, device database override): only a regular file,
// never more than a stated size. A FIFO, a device such as /dev/zero or a
// directory is refused without blocking, and a file that grows while it is
// read stops at the bound instead of filling memory.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "kcache/common/result.hpp"
#include "kcache/common/unique_fd.hpp"

namespace kcache {

// Why read_regular_file() gave nothing.
enum class ReadErrc {
    not_found,    // no such file (or a component is missing)
    not_regular,  // a directory, FIFO, socket or device
    too_large,    // more than the caller's bound
    io,           // any other failure (permission, name too long, read error)
};

struct ReadError {
    ReadErrc code;
    std::string message;  // names the path and what is wrong
};

// Returns the contents of the regular file at `path` when it holds at most
// `max_bytes`; a ReadError naming `path` otherwise.
inline Result<std::string, ReadError> read_regular_file(const std::filesystem::path& path,
                                                        std::size_t max_bytes) {
    const std::string name = path.string();
    // O_NONBLOCK: opening a FIFO without a writer must not wait for one.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd.valid()) {
        const int err = errno;
        return fail(ReadError{err == ENOENT || err == ENOTDIR ? ReadErrc::not_found : ReadErrc::io,
                              name + ": " + std::strerror(err)});
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
        return fail(ReadError{ReadErrc::io, name + ": " + std::strerror(errno)});
    }
    if (!S_ISREG(st.st_mode)) {
        return fail(ReadError{
            ReadErrc::not_regular,
            name + ": not a regular file" + (S_ISDIR(st.st_mode) ? " (a directory)" : "")});
    }
    const auto too_large = [&] {
        return fail(ReadError{ReadErrc::too_large, name + ": larger than the limit of " +
                                                       std::to_string(max_bytes) + " bytes"});
    };
    if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
        return too_large();
    }
    std::string out;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return fail(ReadError{ReadErrc::io, name + ": " + std::strerror(errno)});
        }
        if (n == 0) {
            return out;
        }
        if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
            return too_large();
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
}

}  // namespace kcache
