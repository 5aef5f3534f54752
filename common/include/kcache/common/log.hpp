#pragma once
// The process's one diagnostic sink, shared by every module. Four levels:
//   error    something failed and was not repaired;
//   warning  something the user may need to act on (a quarantined entry, a
//            refused pack, a remote that is down, a suspect driver);
//   info     what went well (a driver canary that validated, a repair done);
//   debug    detail for whoever chases a problem.
// The library's public `set_log_handler` installs the caller's handler here,
// with the most verbose level it asks for; without one, each message up to
// KCACHE_LOG_LEVEL (error, warning, info or debug; default warning) is one
// line on stderr.

#include <functional>
#include <string_view>

namespace kcache::logging {

// The values are those of the C API's kcache_log_level (new levels are
// appended, never renumbered).
enum class Level { warning, error, info, debug };

using Sink = std::function<void(Level, std::string_view)>;

// Whether a message of `level` is wanted by a listener of `most_verbose`
// (error < warning < info < debug).
bool passes(Level level, Level most_verbose) noexcept;

// The level KCACHE_LOG_LEVEL names (read once per process): warning when it
// is unset; an unknown value is warning too, said once on stderr.
Level stderr_level() noexcept;

// Replaces the process's sink (thread-safe); it gets the messages up to
// `most_verbose`. An empty function restores the default (stderr, up to
// stderr_level()). A sink must not call back into `set_sink`.
void set_sink(Sink sink, Level most_verbose = Level::warning);

// Whether a message of `level` reaches the current sink: lets a caller skip
// composing a message that nobody reads.
bool enabled(Level level) noexcept;

// Sends `message` to the current sink when it wants `level`; never throws.
void write(Level level, std::string_view message) noexcept;

inline void error(std::string_view message) noexcept {
    write(Level::error, message);
}
inline void warning(std::string_view message) noexcept {
    write(Level::warning, message);
}
inline void info(std::string_view message) noexcept {
    write(Level::info, message);
}
inline void debug(std::string_view message) noexcept {
    write(Level::debug, message);
}

// The word of `level` ("error", "warning", "info", "debug").
const char* name(Level level) noexcept;

}  // namespace kcache::logging
