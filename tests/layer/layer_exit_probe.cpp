// layer_exit_probe.so, preloaded by LayerOpening tests: reports on stderr
// every exit handler registered on a thread other than the main one (the
// layer's opening thread must register none: exit would run it before the
// handler that waits for that thread), then registers it as asked.

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>

extern "C" __attribute__((visibility("default"))) int __cxa_atexit(void (*fn)(void*), void* arg,
                                                                   void* dso) {
    using Real = int (*)(void (*)(void*), void*, void*);
    static const auto real = reinterpret_cast<Real>(::dlsym(RTLD_NEXT, "__cxa_atexit"));
    if (::gettid() != ::getpid()) {
        Dl_info info{};
        const bool named = ::dladdr(reinterpret_cast<void*>(fn), &info) != 0;
        std::fprintf(stderr, "exit handler registered on a thread: %s %s\n",
                     named && info.dli_fname ? info.dli_fname : "?",
                     named && info.dli_sname ? info.dli_sname : "?");
    }
    return real(fn, arg, dso);
}
