#include "kcache/common/key_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <pthread.h>

#include <array>
#include <atomic>
#include <thread>

namespace kcache {
namespace {

// The descriptors of the locks this process holds now, plus one (0: a free
// slot), for the child of a fork() to close. A lock taken while every slot
// is in use is not listed: a child would keep that one until it exits.
std::array<std::atomic<int>, 256> g_held{};

void close_held_in_child() noexcept {
    for (auto& h : g_held) {
        const int fd = h.exchange(0) - 1;
        if (fd >= 0) {
            ::close(fd);  // the child's reference only: the parent's holder keeps the lock
        }
    }
}

void note_held(int fd) noexcept {
    static const bool registered = ::pthread_atfork(nullptr, nullptr, close_held_in_child) == 0;
    if (!registered) {
        return;
    }
    for (auto& h : g_held) {
        int empty = 0;
        if (h.compare_exchange_strong(empty, fd + 1)) {
            return;
        }
    }
}

void note_released(int fd) noexcept {
    for (auto& h : g_held) {
        int mine = fd + 1;
        if (h.compare_exchange_strong(mine, 0)) {
            return;
        }
    }
}

}  // namespace

KeyLock::KeyLock(UniqueFd fd) : fd_(std::move(fd)) {
    note_held(fd_.get());
}
KeyLock::KeyLock(KeyLock&& o) noexcept = default;
KeyLock& KeyLock::operator=(KeyLock&& o) noexcept {
    if (this != &o) {
        if (fd_.valid()) {
            note_released(fd_.get());
        }
        fd_ = std::move(o.fd_);
    }
    return *this;
}
KeyLock::~KeyLock() {
    if (fd_.valid()) {
        note_released(fd_.get());
    }
}

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
