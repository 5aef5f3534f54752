#include "kcache/common/fork.hpp"

#include <pthread.h>

#include <new>

namespace kcache::fork_safety {
namespace {

std::atomic<std::uint64_t> g_generation{0};
alignas(std::mutex) unsigned char g_rebuild[sizeof(std::mutex)];
alignas(std::mutex) unsigned char g_reopen[sizeof(std::mutex)];

// In the child: a new generation, and new mutexes in place of ones a
// parent thread may have held (the old objects are not destroyed).
void in_child() noexcept {
    new (g_rebuild) std::mutex;
    new (g_reopen) std::mutex;
    g_generation.fetch_add(1, std::memory_order_acq_rel);
}

bool register_handler() noexcept {
    new (g_rebuild) std::mutex;
    new (g_reopen) std::mutex;
    return ::pthread_atfork(nullptr, nullptr, in_child) == 0;
}

}  // namespace

std::uint64_t generation() noexcept {
    static const bool registered = register_handler();
    (void)registered;
    return g_generation.load(std::memory_order_acquire);
}

std::mutex& rebuild_mutex() noexcept {
    (void)generation();  // makes the mutex before its first use
    return *std::launder(reinterpret_cast<std::mutex*>(g_rebuild));
}

std::mutex& reopen_mutex() noexcept {
    (void)generation();
    return *std::launder(reinterpret_cast<std::mutex*>(g_reopen));
}

}  // namespace kcache::fork_safety
