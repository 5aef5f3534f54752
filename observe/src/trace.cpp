// Trace records (trace.hpp): events in the Chrome trace event format, built
// with nlohmann::json (escaping, and invalid UTF-8 replaced rather than
// thrown), gathered per request on the answering thread.

#include "kcache/observe/trace.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>

#include "kcache/common/log.hpp"
#include "kcache/common/sha256.hpp"
#include "trace_sink.hpp"

namespace kcache::trace {
namespace {

using nlohmann::json;

// A source larger than this is hashed but its text is not written.
constexpr std::size_t kMaxSourceText = 1u << 20;

thread_local Request* t_open = nullptr;

double micros(Clock::time_point t) {
    return std::chrono::duration<double, std::micro>(t.time_since_epoch()).count();
}

long thread_id() {
    thread_local const long tid = ::syscall(SYS_gettid);
    return tid;
}

// One event line of a record: ",{…}\n".
std::string line(const json& event) {
    return "," + event.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

json event(std::string_view name, std::string_view category, Clock::time_point start,
           Clock::time_point end) {
    return json{{"name", name},
                {"cat", category},
                {"ph", "X"},
                {"ts", micros(start)},
                {"dur", std::chrono::duration<double, std::micro>(end - start).count()},
                {"pid", ::getpid()},
                {"tid", thread_id()}};
}

// The process's name event, once per process (Perfetto labels its track).
std::string process_name_once() {
    static std::once_flag once;
    std::string out;
    std::call_once(once, [&] {
        char exe[256] = {};
        const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
        std::string name = n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : "process";
        name = name.substr(name.find_last_of('/') + 1);
        out = line(json{{"ph", "M"},
                        {"name", "process_name"},
                        {"pid", ::getpid()},
                        {"tid", thread_id()},
                        {"args", {{"name", name + " " + std::to_string(::getpid())}}}});
    });
    return out;
}

// What `asked` asked for, into `args`; `prefix` gets the source's text
// event when this process has not written it yet.
void add_asked(json& args, const Asked& asked, Clock::time_point at, std::string& prefix) {
    args["device"] = asked.device;
    args["mode"] = to_string(asked.mode);
    if (!asked.kernel.empty()) {
        args["kernel"] = asked.kernel;
        args["params"] = asked.params;
        return;
    }
    const std::string digest = sha256_hex(asked.source);
    args["name"] = asked.name;
    args["source_sha256"] = digest;
    args["options"] = asked.options;
    args["entry_points"] = asked.entry_points;
    if (!first_source(digest)) {
        return;
    }
    json text = json{{"sha256", digest}};
    if (asked.source.size() <= kMaxSourceText) {
        text["text"] = asked.source;
    } else {
        text["omitted"] = "larger than 1 MiB";
    }
    prefix += line(json{{"name", "source"},
                        {"cat", "source"},
                        {"ph", "i"},
                        {"s", "t"},
                        {"ts", micros(at)},
                        {"pid", ::getpid()},
                        {"tid", thread_id()},
                        {"args", text}});
}

std::string one_line(const Asked& asked, const Outcome& outcome, double ms) {
    char time[32];
    std::snprintf(time, sizeof time, "%.3f ms", ms);
    std::string what = asked.kernel.empty() ? asked.name : asked.kernel;
    for (const auto& [k, v] : asked.params) {
        what += " " + k + "=" + v;
    }
    return std::string("trace: ") + result_of(outcome) + " " + to_string(outcome.rung) + " " +
           outcome.key.substr(0, 16) + " " + time + " " + what +
           (outcome.status == StatusCode::ok ? "" : std::string(" ") + to_string(outcome.status));
}

}  // namespace

const char* result_of(const Outcome& outcome) noexcept {
    if (outcome.status != StatusCode::ok) {
        return "MISS";
    }
    return outcome.rung == Rung::jit ? "JIT" : "HIT";
}

void Request::open() noexcept {
    outer_ = t_open;
    t_open = this;
}

void Request::close() noexcept {
    t_open = outer_;
}

void Request::finish(Clock::time_point start, const Asked& asked, const Outcome& outcome) noexcept {
    if (!active_) {
        return;
    }
    t_open = outer_;  // spans after this belong to the outer request, if any
    active_ = false;
    try {
        const Clock::time_point end = Clock::now();
        if (to_stderr()) {
            logging::warning(one_line(
                asked, outcome, std::chrono::duration<double, std::milli>(end - start).count()));
            return;
        }
        json args{{"key", outcome.key.substr(0, 16)},
                  {"rung", to_string(outcome.rung)},
                  {"status", to_string(outcome.status)},
                  {"result", result_of(outcome)},
                  {"compile_us", outcome.compile.count()}};
        json misses = json::array();
        for (const RungMiss& m : outcome.misses) {
            misses.push_back({{"rung", to_string(m.rung)}, {"cause", to_string(m.cause)}});
        }
        args["misses"] = std::move(misses);
        std::string record = process_name_once();
        add_asked(args, asked, start, record);
        json e = event("request", "request", start, end);
        e["args"] = std::move(args);
        record += line(e);
        record += events_;
        write_record(record);
    } catch (...) {
        // Tracing never fails a request: without memory the record is lost.
    }
}

void span(std::string_view name, std::string_view category, Clock::time_point start,
          Clock::time_point end, const Args& args) noexcept {
    if (!on()) {
        return;
    }
    try {
        json e = event(name, category, start, end);
        json a = json::object();
        for (const auto& [k, v] : args) {
            a[k] = v;
        }
        e["args"] = std::move(a);
        if (t_open != nullptr) {
            t_open->events_ += line(e);
        } else if (!to_stderr()) {  // the one-line form has requests only
            write_record(process_name_once() + line(e));
        }
    } catch (...) {
        // As above.
    }
}

void Span::arg(std::string key, std::string value) {
    if (active_) {
        args_.emplace_back(std::move(key), std::move(value));
    }
}

}  // namespace kcache::trace
