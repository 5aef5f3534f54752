// TEST-ONLY stand-in for kcache-jit: speaks the helper's protocol (reads and
// checks one request frame) and then misbehaves as the request's options
// say, so that the parent's handling of a crashing or lying helper can be
// tested without a crash switch in the production helper.
//   options "crash:N"        raise signal N
//   options "garbage-reply"  write bytes that are not a reply frame, exit 0
//   options "hang"           never answer

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "kcache/compiler/jit_protocol.hpp"

int main() {
    std::string frame;
    char buf[65536];
    for (ssize_t n; (n = ::read(0, buf, sizeof buf)) > 0;) {
        frame.append(buf, static_cast<std::size_t>(n));
    }
    auto request = kcache::compiler::decode_request(frame);
    if (!request) {
        std::fprintf(stderr, "crashing_helper: %s\n", request.error().message.c_str());
        return 2;
    }
    const std::string& mode = request->options;
    if (mode.rfind("crash:", 0) == 0) {
        const int sig = std::stoi(mode.substr(6));
        std::fprintf(stderr, "crashing_helper: raising %d\n", sig);
        // The default action, so that the helper dies of `sig` even where a
        // sanitizer's handler would catch it and exit instead.
        ::signal(sig, SIG_DFL);
        ::raise(sig);
    } else if (mode == "garbage-reply") {
        std::fputs("this is not a reply frame", stdout);
        return 0;
    } else if (mode == "hang") {
        for (;;) {
            ::pause();
        }
    }
    return 3;
}
