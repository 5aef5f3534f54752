#pragma once
// The trace's output (trace_sink.cpp), for the record builder (trace.cpp).

#include <set>
#include <string>
#include <string_view>

#include "kcache/observe/trace.hpp"

namespace kcache::trace {

// Whether records go to the log sink as one line each (KCACHE_TRACE=stderr).
bool to_stderr() noexcept;

// True the first time this process asks for `digest` since tracing started
// (the record that carries its text).
bool first_source(const std::string& digest);

// Appends `record` (whole lines, each starting with ',') to the trace file
// in one write, unless that would pass the size bound; failures stop tracing.
void write_record(std::string_view record) noexcept;

}  // namespace kcache::trace
