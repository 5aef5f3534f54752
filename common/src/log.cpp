#include "kcache/common/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace kcache::logging {
namespace {

struct Current {
    std::mutex mu;
    Sink sink;
    Level most_verbose = Level::warning;
};

Current& current() {
    static Current c;
    return c;
}

int rank(Level level) noexcept {
    switch (level) {
        case Level::error:
            return 0;
        case Level::warning:
            return 1;
        case Level::info:
            return 2;
        case Level::debug:
            return 3;
    }
    return 1;
}

Level read_stderr_level() noexcept {
    const char* v = std::getenv("KCACHE_LOG_LEVEL");
    if (v == nullptr || *v == '\0') {
        return Level::warning;
    }
    for (Level l : {Level::error, Level::warning, Level::info, Level::debug}) {
        if (std::string_view(v) == name(l)) {
            return l;
        }
    }
    std::fprintf(stderr,
                 "kcache: warning: KCACHE_LOG_LEVEL=\"%s\": expected error, warning, info or "
                 "debug; warning is used\n",
                 v);
    return Level::warning;
}

}  // namespace

const char* name(Level level) noexcept {
    switch (level) {
        case Level::error:
            return "error";
        case Level::warning:
            return "warning";
        case Level::info:
            return "info";
        case Level::debug:
            return "debug";
    }
    return "warning";
}

bool passes(Level level, Level most_verbose) noexcept {
    return rank(level) <= rank(most_verbose);
}

Level stderr_level() noexcept {
    static const Level level = read_stderr_level();
    return level;
}

void set_sink(Sink s, Level most_verbose) {
    Current& c = current();
    std::lock_guard lock(c.mu);
    c.sink = std::move(s);
    c.most_verbose = c.sink ? most_verbose : Level::warning;
}

bool enabled(Level level) noexcept {
    Current& c = current();
    std::lock_guard lock(c.mu);
    return passes(level, c.sink ? c.most_verbose : stderr_level());
}

void write(Level level, std::string_view message) noexcept {
    Current& c = current();
    std::lock_guard lock(c.mu);
    if (c.sink) {
        if (passes(level, c.most_verbose)) {
            try {
                c.sink(level, message);
            } catch (...) {
                // A handler that throws loses its message, never the caller's call.
            }
        }
        return;
    }
    if (passes(level, stderr_level())) {
        std::fprintf(stderr, "kcache: %s: %.*s\n", name(level), static_cast<int>(message.size()),
                     message.data());
    }
}

}  // namespace kcache::logging
