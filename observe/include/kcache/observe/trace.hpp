#pragma once
// The request trace (docs/design.md, "Metrics and trace"): KCACHE_TRACE=PATH
// appends one record per request to PATH in the Chrome trace event format
// (JSON Array Format, opened by Perfetto and chrome://tracing);
// KCACHE_TRACE=stderr (or 1) sends one line per request to the log sink instead.
//
//   file    := "[" header "\n" ( "," event "\n" )*      -- the closing "]" is
//                                                        --   optional in this format
//   header  := {"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"kcache trace"}}
//   event   := {"name":…,"cat":…,"ph":"X","ts":µs,"dur":µs,"pid":…,"tid":…,"args":{…}}
//            | {"name":"source","cat":"source","ph":"i","s":"t","ts":…,"pid":…,"tid":…,
//               "args":{"sha256":hex,"text":string}}     -- once per source and process
//
// A record (a request and the spans inside it, or one span of another
// thread's work: a compile, an upload) is one write(2) to a descriptor
// opened with O_APPEND, so the records of many processes and threads never
// interleave; the header is written under an flock by the first process.
// Timestamps are CLOCK_MONOTONIC, shared by the processes of a machine. A
// request event's args carry what `kcache capture` needs to ask again:
//
//   request args := "key" (16 hex digits), "rung", "status", "result"
//                   (HIT | MISS | JIT), "device", "mode", "misses"
//                   ([{"rung","cause"}] in ladder order), and either
//                   "kernel" + "params" (a registry kernel) or "name",
//                   "source_sha256", "options", "entry_points" (the caller's own)
//
// Bounded: a process writes no record that would take the file past
// KCACHE_TRACE_MAX_SIZE (it stops, and says so once). A location that
// cannot be opened or written (read-only, full) is reported once through
// the log sink and tracing stops for the process; requests go on unaffected.
//
// Using it (the cache service, and any layer that reports requests the
// same way): check on() first, so that an untraced request costs one load;
// open a Request on the thread that answers; add spans with Span (timed by
// scope) or span(); finish the Request with its outcome.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kcache/kcache_types.hpp"
#include "kcache/observe/names.hpp"

namespace kcache::trace {

using Clock = std::chrono::steady_clock;
using Args = std::vector<std::pair<std::string, std::string>>;  // string values

// Starts tracing the process to `where` (a path, "stderr" or "1" for the
// log sink, or "" for off)
// with records up to `max_bytes` of file; a second call with the same
// setting changes nothing, another replaces it.
void configure(const std::string& where, std::uint64_t max_bytes);

namespace detail {
extern std::atomic<bool> g_on;  // set by configure(), cleared when tracing stops
}  // namespace detail

// Whether requests are traced now (one relaxed load, inlined).
inline bool on() noexcept {
    return detail::g_on.load(std::memory_order_relaxed);
}

// What a request asked for, for its record (and for capture).
struct Asked {
    std::string kernel;                         // registry kernel or alias; empty for a source
    std::map<std::string, std::string> params;  // its variant parameters
    std::string name;                           // the caller's own kernel: descriptive name
    std::string source;                         // … its source (hashed; text written once)
    std::string options;
    std::vector<std::string> entry_points;
    std::string device;  // the device's name
    Mode mode = Mode::blocking;
};

// A request being answered on this thread: spans that end on this thread
// while it is open are written with it, as one record, by finish().
class Request {
  public:
    // Opens the thread's request when tracing is on; inert otherwise.
    Request() noexcept : active_(on()) {
        if (active_) {
            open();
        }
    }
    ~Request() {
        if (active_) {
            close();
        }
    }
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;

    bool active() const noexcept { return active_; }
    // Writes the record (or the stderr line): the request from `start` to
    // now with `outcome` and `asked`, and the spans gathered meanwhile.
    void finish(Clock::time_point start, const Asked& asked, const Outcome& outcome) noexcept;

  private:
    void open() noexcept;
    void close() noexcept;

    bool active_ = false;
    Request* outer_ = nullptr;  // a request opened inside another (a layer over the cache)
    std::string events_;        // the spans' events so far
    friend void span(std::string_view, std::string_view, Clock::time_point, Clock::time_point,
                     const Args&) noexcept;
};

// Records a span of `category` ("rung", "plan", "gate", "read", "load",
// "compile", "remote", "publish", …)
// from `start` to `end`: inside the thread's open request, or as a record of
// its own when none is open (work of a thread that answers no request).
void span(std::string_view name, std::string_view category, Clock::time_point start,
          Clock::time_point end, const Args& args = {}) noexcept;

// Times a scope as a span (nothing when tracing is off at construction).
class Span {
  public:
    Span(std::string_view name, std::string_view category) noexcept
        : active_(on()), name_(name), category_(category) {
        if (active_) {
            start_ = Clock::now();
        }
    }
    // Inlined: an untraced span costs a test of one byte.
    [[gnu::always_inline]] ~Span() {
        if (active_) {
            span(name_, category_, start_, Clock::now(), args_);
        }
    }
    Span(const Span&) = delete;
    Span& operator=(const Span&) = delete;
    // Whether the span is recorded (tracing was on at construction).
    bool active() const noexcept { return active_; }
    // Adds an argument to the span's event.
    void arg(std::string key, std::string value);

  private:
    bool active_;
    std::string_view name_, category_;
    Clock::time_point start_;
    Args args_;
};

// "HIT", "MISS" or "JIT" for an outcome (the one-line form's first word).
const char* result_of(const Outcome& outcome) noexcept;

}  // namespace kcache::trace
