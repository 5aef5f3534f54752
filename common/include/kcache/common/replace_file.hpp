#pragma once
// Replaces a small file whole: the text goes to a temporary sibling that is
// then renamed over `path`, so a reader sees the old content or the new one,
// never part of one (metrics files, manifests, captured sources).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "kcache/common/fd_io.hpp"
#include "kcache/common/unique_fd.hpp"

namespace kcache {

// Writes `text` to `path` atomically with permissions `mode`; false with
// `error` (what failed and why) when it could not, leaving no temporary file.
inline bool replace_file(const std::filesystem::path& path, std::string_view text, mode_t mode,
                         std::string& error) {
    std::string tmp = path.string() + ".tmp.XXXXXX";
    UniqueFd fd(::mkstemp(tmp.data()));
    if (!fd.valid()) {
        error = std::string("cannot create a temporary file beside it: ") + std::strerror(errno);
        return false;
    }
    const bool written =
        ::fchmod(fd.get(), mode) == 0 && write_all(fd.get(), text.data(), text.size());
    const int saved = errno;
    fd.reset();
    if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
        error = std::string(written ? "cannot rename the new file over it: " : "cannot write: ") +
                std::strerror(written ? errno : saved);
        ::unlink(tmp.c_str());
        return false;
    }
    return true;
}

}  // namespace kcache
