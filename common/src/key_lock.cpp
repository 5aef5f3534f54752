#include "kcache/common/key_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <thread>

namespace kcache {

Result<KeyLock, LockError> KeyLock::acquire(const std::filesystem::path& store_dir,
                                            const std::string& key_hex,
                                            std::chrono::steady_clock::time_point deadline) {
    auto dir = store_dir / "locks";
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        return fail(LockError::unavailable);
    }
    auto path = dir / (key_hex + ".lock");
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd.valid()) {
        return fail(LockError::unavailable);
    }
    auto pause = std::chrono::milliseconds(1);
    for (;;) {
        if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) {
            return KeyLock(std::move(fd));
        }
        if (errno != EWOULDBLOCK && errno != EINTR) {
            return fail(LockError::unavailable);
        }
        auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
            return fail(LockError::timed_out);
        }
        std::this_thread::sleep_for(
            std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
        pause = std::min(pause * 2, std::chrono::milliseconds(20));
    }
}

}  // namespace kcache
