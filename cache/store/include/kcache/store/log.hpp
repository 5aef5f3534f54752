#pragma once
// The store's one logging hook: warnings about quarantined entries, files
// moved aside and read-only fallbacks. Default: one line on stderr.

#include <functional>
#include <string_view>

namespace kcache::store {

enum class LogLevel { warning, error };

using LogSink = std::function<void(LogLevel, std::string_view)>;

// Replaces the sink (thread-safe); an empty function restores the default.
void set_log_sink(LogSink sink);

// Sends one message to the current sink.
void log_message(LogLevel level, std::string_view message);

}  // namespace kcache::store
