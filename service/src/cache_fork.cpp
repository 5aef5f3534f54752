// A Cache across fork() (docs/design.md, "fork() and threads"): a forked
// child's first call makes parts of its own; the parent's are never used or
// freed there (kcache/common/fork.hpp).

#include "cache_impl.hpp"
#include "kcache/common/fork.hpp"
#include "kcache/common/log.hpp"
#include "kcache/service/parts.hpp"
#include "observe.hpp"

namespace kcache {

Cache::~Cache() {
    Impl* impl = impl_.load(std::memory_order_acquire);
    if (impl->made_in == fork_safety::generation()) {
        delete impl;
    }  // else the parent's parts, which a child leaves as they are (fork.hpp)
}

// The first call in a forked child: parts of its own from the same Config,
// as a fresh process opens them. The parent's stay allocated and unused.
Cache::Impl* Cache::reopen_in_child() noexcept {
    std::lock_guard lock(fork_safety::reopen_mutex());
    const std::uint64_t now = fork_safety::generation();
    Impl* impl = impl_.load(std::memory_order_acquire);
    if (impl->made_in == now) {
        return impl;  // another thread of the child reopened it
    }
    if (failed_in_.load() == now) {
        return nullptr;
    }
    std::string why;
    try {
        if (auto parts = service::open_parts(impl->config)) {
            auto* fresh = new Impl(impl->config, std::move(*parts));
            service::start_observing(fresh->config);
            impl_.store(fresh, std::memory_order_release);
            return fresh;
        } else {
            why = parts.error().message;
        }
    } catch (const std::exception& e) {
        why = e.what();
    } catch (...) {
        why = "unexpected exception";
    }
    failed_in_.store(now);
    logging::warning("after fork(), this process could not open its cache (" + why +
                     "); its requests answer disabled");
    return nullptr;
}

}  // namespace kcache
