// The layer's thread (service_state.hpp): it opens the cache early, then
// learns the devices of the contexts the application creates, and fork()
// and exit wait for it.

#include <pthread.h>

#include <cstdlib>
#include <new>
#include <system_error>

#include "layer.hpp"
#include "service.hpp"
#include "service_state.hpp"

namespace kcache::layer {
namespace {

// Learns the devices handed over by prepare_early (the cache's device
// facts: a first build of each then makes no driver queries for them),
// until none is left; each is released after.
void prepare_handed(State& s) {
    InsideCache inside;  // the probe's queries pass through
    for (;;) {
        std::vector<cl_device_id> devices;
        {
            std::lock_guard lock(s.prepare_mutex);
            devices.swap(s.to_prepare);
            if (devices.empty()) {
                s.preparing = false;
                return;
            }
        }
        Cache* cache = s.live.load();
        for (cl_device_id device : devices) {
            if (cache != nullptr) {
                (void)cache->prepare(device);  // a device it cannot probe fails its build too
            }
            target().clReleaseDevice(device);
        }
    }
}

// The layer's thread: the opening (unless a build has opened the cache
// already), then the devices handed over meanwhile.
void background(State& s, bool open) {
    t_opener = true;
    if (open) {
        open_in_background(s);
    }
    prepare_handed(s);
}

// fork() waits for the opening thread, which the child would not have (its
// half-made cache with it), and holds the opening's lock across, so that no
// thread starts one meanwhile; the counters' and the program registry's
// locks too (in that order, each held briefly elsewhere), so that the child
// gets them unlocked and their data whole. The cache itself makes its own
// parts in the child (Cache). The opening thread itself starts no process
// with fork() (kcache's helpers are spawned, which runs no fork handler).
void before_fork() {
    if (!t_opener) {
        State& s = state();
        s.open_mutex.lock();
        join_opener_locked(s);
        s.prepare_mutex.lock();
        s.pending_mutex.lock();
        lock_registry_for_fork();
    }
}
void after_fork() {
    if (!t_opener) {
        unlock_registry_after_fork();
        state().pending_mutex.unlock();
        state().prepare_mutex.unlock();
        state().open_mutex.unlock();
    }
}
// The child has no thread to take devices a parent's thread handed over
// (their retains are left: a root device's is no count at all).
void after_fork_child() {
    if (!t_opener) {
        state().to_prepare.clear();
        state().preparing = false;
    }
    after_fork();
}

// Starts the layer's thread (caller holds open_mutex, and has set
// `preparing`): to open the cache when no one has begun to (`open`), then
// to prepare the devices handed over. False when it cannot: no thread, or
// no exit and fork handlers (the first build then opens the cache).
bool start_locked(State& s, bool open) {
    static const bool handlers = ::pthread_atfork(before_fork, after_fork, after_fork_child) == 0 &&
                                 std::atexit(close_at_exit) == 0;
    if (!handlers) {
        return false;
    }
    join_opener_locked(s);  // the thread before, done with its work
    try {
        s.opener = std::thread(background, std::ref(s), open);
    } catch (const std::system_error&) {
        return false;
    }
    if (open) {
        s.phase = Phase::started;
    }
    return true;
}

// No thread takes the devices handed over: they are released.
void drop_handed(State& s) {
    std::lock_guard prep(s.prepare_mutex);
    for (cl_device_id device : s.to_prepare) {
        target().clReleaseDevice(device);
    }
    s.to_prepare.clear();
    s.preparing = false;
}

}  // namespace

void open_early() noexcept {
    if (inside_cache()) {
        return;  // kcache's own calls, the opening thread's among them
    }
    State& s = state();
    if (s.ready.load(std::memory_order_acquire)) {
        return;
    }
    std::lock_guard lock(s.open_mutex);
    if (s.phase != Phase::idle) {
        return;
    }
    {
        std::lock_guard prep(s.prepare_mutex);
        if (s.preparing) {
            return;  // prepare_early starts the thread, which opens it
        }
        s.preparing = true;
    }
    if (!start_locked(s, true)) {
        drop_handed(s);  // the first build opens it
    }
}

void prepare_early(const cl_device_id* devices, cl_uint count) noexcept {
    State& s = state();
    if (inside_cache() || devices == nullptr ||
        (s.ready.load(std::memory_order_acquire) && s.live.load() == nullptr)) {
        return;  // kcache's own context, or no cache to prepare for
    }
    try {
        std::lock_guard prep(s.prepare_mutex);
        for (cl_uint i = 0; i < count; ++i) {
            if (devices[i] == nullptr || s.handed.contains(devices[i]) ||
                target().clRetainDevice(devices[i]) != CL_SUCCESS) {
                continue;
            }
            if (s.handed.size() < kMaxHanded) {
                s.handed.insert(devices[i]);
            }
            s.to_prepare.push_back(devices[i]);
        }
        if (s.to_prepare.empty() || s.preparing) {
            return;  // nothing new, or the running thread takes them
        }
        s.preparing = true;
    } catch (const std::bad_alloc&) {
        return;  // those retained and listed are prepared by the next thread
    }
    std::lock_guard lock(s.open_mutex);
    if (!start_locked(s, s.phase == Phase::idle && !s.ready.load())) {
        drop_handed(s);
    }
}

}  // namespace kcache::layer
