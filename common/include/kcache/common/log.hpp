#pragma once
// The process's one diagnostic sink, shared by every module: warnings about
// quarantined entries, refused packs, remotes that are down, helpers that
// were stopped. The library's public `set_log_handler` installs the caller's
// handler here; without one, each message is one line on stderr.

#include <functional>
#include <string_view>

namespace kcache::logging {

enum class Level { warning, error };

using Sink = std::function<void(Level, std::string_view)>;

// Replaces the process's sink (thread-safe); an empty function restores the
// default (stderr). A sink must not call back into `set_sink`.
void set_sink(Sink sink);

// Sends `message` to the current sink; never throws.
void write(Level level, std::string_view message) noexcept;

inline void warning(std::string_view message) noexcept {
    write(Level::warning, message);
}
inline void error(std::string_view message) noexcept {
    write(Level::error, message);
}

}  // namespace kcache::logging
