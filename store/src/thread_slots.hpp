#pragma once
// What a thread keeps for reuse (zstd contexts, a hot copy's memory) in
// plain thread_local pointers, which stay readable to the thread's end,
// freed by `FreeAll` when the thread's thread_local objects are destroyed.
// The main thread destroys those before exit handlers run, and a cache
// closed by one (the OpenCL layer's) still writes back then: after that,
// thread_slots_open() says so, and the caller uses memory of its own for
// the call instead of a slot freed under it.

namespace kcache::store {

// Whether the calling thread's slots of `FreeAll` may be used (and will be
// freed by it at the thread's end); false once they have been.
template <void (*FreeAll)()>
bool thread_slots_open() noexcept {
    thread_local bool closed = false;  // trivially destructible: readable at exit
    struct Closer {
        ~Closer() {
            FreeAll();
            closed = true;
        }
    };
    if (closed) {
        return false;
    }
    thread_local Closer closer;
    (void)closer;
    return true;
}

}  // namespace kcache::store
