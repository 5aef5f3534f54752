#pragma once
// The one way to open or read a file named by outside data (config file,
// manifest and its sources, device database override, keys, signatures,
// tokens, state files, packs): only a regular file, and for a whole read
// never more than a stated size, or line by line with a bound on each line.
// A FIFO, a device such as /dev/zero or a directory is refused without
// blocking, and a file that grows while it is read stops at the bound
// instead of filling memory.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "kcache/common/result.hpp"
#include "kcache/common/unique_fd.hpp"
#include "kcache/common/work.hpp"

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

// Opens the regular file at `path` for reading, following symlinks: the
// open never waits (O_NONBLOCK, so a FIFO without a writer is refused at
// once, not waited on), anything but a regular file is `not_regular`, and
// the descriptor returned reads in blocking mode. `st`, when given, gets
// the file's fstat.
inline Result<UniqueFd, ReadError> open_regular_file(const std::filesystem::path& path,
                                                     struct stat* st = nullptr) {
    const std::string name = path.string();
    work::add(work::Item::files_opened);
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd.valid()) {
        const int err = errno;
        return fail(ReadError{err == ENOENT || err == ENOTDIR ? ReadErrc::not_found : ReadErrc::io,
                              name + ": " + std::strerror(err)});
    }
    struct stat own {};
    struct stat& s = st != nullptr ? *st : own;
    if (::fstat(fd.get(), &s) != 0) {
        return fail(ReadError{ReadErrc::io, name + ": " + std::strerror(errno)});
    }
    if (!S_ISREG(s.st_mode)) {
        const char* what = S_ISDIR(s.st_mode)    ? " (a directory)"
                           : S_ISFIFO(s.st_mode) ? " (a FIFO)"
                           : S_ISCHR(s.st_mode)  ? " (a character device)"
                           : S_ISSOCK(s.st_mode) ? " (a socket)"
                                                 : "";
        return fail(ReadError{ReadErrc::not_regular, name + ": not a regular file" + what});
    }
    const int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
        return fail(ReadError{ReadErrc::io, name + ": " + std::strerror(errno)});
    }
    return fd;
}

// One read(2) of at most `size` bytes of `fd` into `buf`, retried on EINTR:
// the count read (0 at the end), or an io ReadError naming `name`.
inline Result<std::size_t, ReadError> read_block(int fd, char* buf, std::size_t size,
                                                 const std::string& name) {
    for (;;) {
        const ssize_t n = ::read(fd, buf, size);
        if (n >= 0) {
            work::add(work::Item::bytes_read, static_cast<std::uint64_t>(n));
            return static_cast<std::size_t>(n);
        }
        if (errno != EINTR) {
            return fail(ReadError{ReadErrc::io, name + ": " + std::strerror(errno)});
        }
    }
}

// Returns the contents of the regular file at `path` when it holds at most
// `max_bytes`; a ReadError naming `path` otherwise (open_regular_file()'s
// checks, then `too_large` for a file over the bound or one that grows past
// it while it is read).
inline Result<std::string, ReadError> read_regular_file(const std::filesystem::path& path,
                                                        std::size_t max_bytes) {
    const std::string name = path.string();
    struct stat st {};
    auto fd = open_regular_file(path, &st);
    if (!fd) {
        return fail(fd.error());
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
        auto n = read_block(fd->get(), buf, sizeof buf, name);
        if (!n) {
            return fail(n.error());
        }
        if (*n == 0) {
            return out;
        }
        if (out.size() + *n > max_bytes) {
            return too_large();
        }
        out.append(buf, *n);
    }
}

// Streams the regular file at `path` (open_regular_file()'s checks) to
// `on_line(text, cut)`, one call per line without its '\n' (a last line
// without one included): memory holds one line of at most `max_line` bytes;
// a longer line is skipped to its end and reported with `cut` true and an
// empty `text`. Returns the number of lines, or a ReadError naming `path`.
template <class OnLine>
Result<std::size_t, ReadError> for_each_line(const std::filesystem::path& path,
                                             std::size_t max_line, OnLine&& on_line) {
    auto fd = open_regular_file(path);
    if (!fd) {
        return fail(fd.error());
    }
    std::string line;
    bool cut = false;
    std::size_t lines = 0;
    char buf[65536];
    for (;;) {
        auto n = read_block(fd->get(), buf, sizeof buf, path.string());
        if (!n) {
            return fail(n.error());
        }
        if (*n == 0) {
            break;
        }
        std::string_view block(buf, *n);
        for (std::size_t nl; (nl = block.find('\n')) != std::string_view::npos;) {
            cut = cut || line.size() + nl > max_line;
            if (!cut) {
                line.append(block.substr(0, nl));
            }
            on_line(std::string_view(cut ? std::string_view() : std::string_view(line)), cut);
            ++lines;
            line.clear();
            cut = false;
            block.remove_prefix(nl + 1);
        }
        cut = cut || line.size() + block.size() > max_line;
        if (cut) {
            line.clear();  // the rest of this line is skipped, not kept
        } else {
            line.append(block);
        }
    }
    if (!line.empty() || cut) {
        on_line(std::string_view(line), cut);
        ++lines;
    }
    return lines;
}

}  // namespace kcache
