#pragma once
// KeyLock: a per-key advisory file lock (flock) under <store>/locks/, so that
// processes asking for one key share one compile. Released on destruction
// (and by the kernel when the holder dies, so a killed compiler never
// leaves a stale lock). A forked child closes its copies of the locks held
// at the fork (the threads that held them are not in the child), so a lock
// is never kept by a child after its holder in the parent lets it go.

#include <chrono>
#include <filesystem>
#include <string>

#include "kcache/common/result.hpp"
#include "kcache/common/unique_fd.hpp"

namespace kcache {

enum class LockError {
    timed_out,    // another process held it until the deadline
    unavailable,  // no lock directory (read-only store): go on unlocked
};

class KeyLock {
  public:
    // Waits (polling) until the lock for `key_hex` is held or `deadline` passes.
    static Result<KeyLock, LockError> acquire(const std::filesystem::path& store_dir,
                                              const std::string& key_hex,
                                              std::chrono::steady_clock::time_point deadline);

    KeyLock(KeyLock&& o) noexcept;
    KeyLock& operator=(KeyLock&& o) noexcept;
    KeyLock(const KeyLock&) = delete;
    KeyLock& operator=(const KeyLock&) = delete;
    ~KeyLock();

  private:
    explicit KeyLock(UniqueFd fd);
    UniqueFd fd_;
};

}  // namespace kcache
