// TEST-ONLY stand-in for kcache-jit started one request at a time
// (KCACHE_JIT_HELPERS=0): it reads the request frame; a compile alone
// (JitRequest::compile_only) never answers, so that the watchdog must stop
// it, and any other request is served by the real helper, which it becomes
// with the same frame on its standard input. The production helper has no
// switch to hang.

#include <unistd.h>

#include <cstdio>
#include <string>

#include "kcache/compiler/jit_protocol.hpp"

int main(int, char** argv) {
    std::string frame;
    char buf[65536];
    for (ssize_t n; (n = ::read(0, buf, sizeof buf)) > 0;) {
        frame.append(buf, static_cast<std::size_t>(n));
    }
    auto request = kcache::compiler::decode_request(frame);
    if (request && request->compile_only) {
        for (;;) {
            ::pause();
        }
    }
    std::FILE* again = std::tmpfile();
    if (again == nullptr || std::fwrite(frame.data(), 1, frame.size(), again) != frame.size() ||
        std::fflush(again) != 0 || ::lseek(::fileno(again), 0, SEEK_SET) != 0 ||
        ::dup2(::fileno(again), 0) != 0) {
        std::perror("hanging_jit: cannot hand the frame on");
        return 2;
    }
    argv[0] = const_cast<char*>(KCACHE_TEST_JIT_PATH);
    ::execv(KCACHE_TEST_JIT_PATH, argv);
    std::perror("hanging_jit: cannot run kcache-jit");
    return 127;
}
