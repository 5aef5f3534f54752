#include "kcache/common/log.hpp"

#include <cstdio>
#include <mutex>
#include <string>

namespace kcache::logging {
namespace {

std::mutex& sink_mutex() {
    static std::mutex m;
    return m;
}

Sink& sink() {
    static Sink s;
    return s;
}

}  // namespace

void set_sink(Sink s) {
    std::lock_guard lock(sink_mutex());
    sink() = std::move(s);
}

void write(Level level, std::string_view message) noexcept {
    std::lock_guard lock(sink_mutex());
    if (sink()) {
        try {
            sink()(level, message);
        } catch (...) {
            // A handler that throws loses its message, never the caller's call.
        }
        return;
    }
    const char* tag = level == Level::error ? "error" : "warning";
    std::fprintf(stderr, "kcache: %s: %.*s\n", tag, static_cast<int>(message.size()),
                 message.data());
}

}  // namespace kcache::logging
