#include "kcache/store/log.hpp"

#include <cstdio>
#include <mutex>
#include <string>

namespace kcache::store {
namespace {

std::mutex& sink_mutex() {
    static std::mutex m;
    return m;
}

LogSink& sink() {
    static LogSink s;
    return s;
}

}  // namespace

void set_log_sink(LogSink s) {
    std::lock_guard lock(sink_mutex());
    sink() = std::move(s);
}

void log_message(LogLevel level, std::string_view message) {
    std::lock_guard lock(sink_mutex());
    if (sink()) {
        sink()(level, message);
        return;
    }
    const char* tag = level == LogLevel::error ? "error" : "warning";
    std::fprintf(stderr, "kcache: %s: %.*s\n", tag, static_cast<int>(message.size()),
                 message.data());
}

}  // namespace kcache::store
