#pragma once
// fork() and the objects that own threads, helper processes and locks.
//
// A child of fork() has one thread, the one that called fork(). Every other
// thread of the parent is gone from it, with whatever it held: a mutex it
// had locked stays locked forever, a condition variable keeps waiters that
// never leave, a helper process is the parent's child, not this one's. So a
// forked child never uses what the parent built while it had threads; it
// makes its own at its first use, from the same settings, and leaves the
// parent's untouched and unfreed (freeing it would join threads that do not
// exist in the child). The cost of a fork is that leak, once per child.

#include <atomic>
#include <cstdint>
#include <mutex>

namespace kcache::fork_safety {

// How many fork()s separate this process from the first one that asked
// (0 there). The first call registers the fork handler, so ask once before
// the first fork (Cache::open does).
std::uint64_t generation() noexcept;

// Serializes the remaking of heavier parts in a child (a Cache's, which
// may make PerProcess values meanwhile); like rebuild_mutex, a fresh,
// unlocked mutex in every forked child.
std::mutex& reopen_mutex() noexcept;

// Serializes the making of PerProcess values; a fresh, unlocked mutex in
// every forked child (the parent's may have been held by a thread the child
// does not have).
std::mutex& rebuild_mutex() noexcept;

// Process-wide state that a forked child starts afresh: get() returns this
// process's T, made by its first get(). A child's first get() makes a new T
// and leaves the parent's (its mutexes possibly held, its condition
// variables with waiters that are gone) untouched, never destroyed. Use it
// for static storage only; T must be default-constructible.
template <class T>
class PerProcess {
  public:
    T& get() {
        const std::uint64_t now = generation();
        Made* made = made_.load(std::memory_order_acquire);
        if (made != nullptr && made->generation == now) {
            return made->value;
        }
        std::lock_guard lock(rebuild_mutex());
        made = made_.load(std::memory_order_acquire);
        if (made == nullptr || made->generation != now) {
            made = new Made{now, {}};  // the parent's, if any, is left as it is
            made_.store(made, std::memory_order_release);
        }
        return made->value;
    }

  private:
    struct Made {
        std::uint64_t generation;
        T value;
    };
    std::atomic<Made*> made_{nullptr};
};

}  // namespace kcache::fork_safety
