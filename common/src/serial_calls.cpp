#include "kcache/common/serial_calls.hpp"

#include <atomic>

#include "kcache/common/fork.hpp"

namespace kcache::serial_calls {
namespace {

std::atomic<bool> g_on{false};
fork_safety::PerProcess<std::recursive_mutex> g_lock;

}  // namespace

void turn_on() noexcept {
    g_on.store(true, std::memory_order_release);
}

bool on() noexcept {
    return g_on.load(std::memory_order_acquire);
}

std::unique_lock<std::recursive_mutex> hold() noexcept {
    if (!on()) [[likely]] {
        return {};
    }
    return std::unique_lock(g_lock.get());
}

}  // namespace kcache::serial_calls
