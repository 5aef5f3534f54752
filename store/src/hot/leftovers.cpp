// The temporary files a writer of the hot directory leaves when it is
// killed mid-write (hot_copies.hpp, remove_leftovers).

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <string>

#include "hot_copies.hpp"

namespace kcache::store::hot {
namespace {

// Whether `name` is a copy's temporary ("<key>.tmp-<pid>") of a process
// that is gone.
bool copy_temporary_of_the_dead(std::string_view name) {
    const auto at = name.rfind(".tmp-");
    if (at == std::string_view::npos || at + 5 == name.size()) {
        return false;
    }
    long pid = 0;
    for (const char c : name.substr(at + 5)) {
        if (c < '0' || c > '9' || pid > 1L << 31) {
            return false;
        }
        pid = pid * 10 + (c - '0');
    }
    return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

std::uint64_t remove_leftovers(const std::filesystem::path& dir, std::chrono::seconds older_than) {
    std::uint64_t removed = 0;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !dir.empty() && !ec && it != end;
         it.increment(ec)) {
        const std::string name = it->path().filename().string();
        bool stale = copy_temporary_of_the_dead(name);
        struct stat st {};
        // replace_file's temporaries ("<name>.tmp.XXXXXX") carry no pid: by age.
        if (!stale && name.find(".tmp.") != std::string::npos &&
            ::lstat(it->path().c_str(), &st) == 0) {
            stale = st.st_mtime + older_than.count() < std::time(nullptr);
        }
        if (stale && ::unlink(it->path().c_str()) == 0) {  // a link itself, never its target
            ++removed;
        }
    }
    return removed;
}

}  // namespace kcache::store::hot
