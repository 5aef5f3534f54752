// The text exposition of metrics (metrics.hpp). The two formats differ only
// in how a counter family is named and in the terminator:
//
//   openmetrics := family* "# EOF\n"
//   prometheus  := family*
//   family      := "# HELP " name " " help "\n" "# TYPE " name " " type "\n" sample*
//   sample      := name suffix ( "{" labels "}" )? " " value "\n"
//
// A counter's family is "kcache_x" in OpenMetrics and "kcache_x_total" in
// the Prometheus format; its samples are "kcache_x_total" in both. A
// histogram's samples are _bucket (cumulative, `le` in seconds, "+Inf"
// last), _count and _sum (seconds).

#include <charconv>
#include <cstdio>

#include "kcache/observe/counters.hpp"
#include "kcache/observe/metrics.hpp"

namespace kcache::metrics {
namespace {

// Shortest text that reads back as `v` (Go's and Python's float formatting
// agree on it for these values: "2.5e-07", "0.001", "1", "100").
std::string number(double v) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

std::string seconds(std::uint64_t ns) {
    return number(static_cast<double>(ns) / 1e9);
}

std::string with(const std::string& labels, const std::string& more) {
    if (labels.empty()) {
        return "{" + more + "}";
    }
    return "{" + labels + "," + more + "}";
}

// The HELP of a counter row: its doc, said of the whole process.
std::string counter_help(const char* doc) {
    std::string help(doc);
    if (!help.empty() && help[0] >= 'a' && help[0] <= 'z') {
        help[0] = static_cast<char>(help[0] - 'a' + 'A');
    }
    return help + "; every cache of this process, closed ones included.";
}

// One family per row of <kcache/kcache_counters.def> that a cache counts
// itself: a new row is in the exposition with no other change.
void add_cache_counters(Exposition& out, const CacheStats& s) {
    struct Row {
        CounterSource source;
        const char* name;
        const char* doc;
        std::uint64_t value;
    };
    const Row rows[] = {
#define KCACHE_COUNTER(field, frozen, source, doc) \
    {CounterSource::source, "kcache_" #field, doc, s.field},
#include "kcache/kcache_counters.def"
#undef KCACHE_COUNTER
    };
    for (const Row& r : rows) {
        if (r.source == CounterSource::cache) {
            out.counter(r.name, counter_help(r.doc));
            out.sample("", r.value);
        }
    }
}

}  // namespace

std::string label(const std::string& key, const std::string& value) {
    std::string v;
    for (char c : value) {
        if (c == '\\' || c == '"') {
            v += '\\';
            v += c;
        } else if (c == '\n') {
            v += "\\n";
        } else {
            v += c;
        }
    }
    return key + "=\"" + v + "\"";
}

void Exposition::counter(const std::string& name, const std::string& help) {
    family_ = name;
    counter_ = true;
    const std::string shown = format_ == Format::openmetrics ? name : name + "_total";
    text_ += "# HELP " + shown + " " + help + "\n# TYPE " + shown + " counter\n";
}

void Exposition::gauge(const std::string& name, const std::string& help) {
    family_ = name;
    counter_ = false;
    text_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n";
}

void Exposition::histogram(const std::string& name, const std::string& help) {
    family_ = name;
    counter_ = false;
    text_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
}

void Exposition::sample(const std::string& labels, std::uint64_t value) {
    text_ += family_ + (counter_ ? "_total" : "") + (labels.empty() ? "" : "{" + labels + "}") +
             " " + std::to_string(value) + "\n";
}

void Exposition::sample(const std::string& labels, const LatencyHistogram& h) {
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < kLatencyBuckets; ++b) {
        cumulative += h.buckets[b];
        const std::string le =
            b < kLatencyBoundsNs.size() ? seconds(kLatencyBoundsNs[b]) : std::string("+Inf");
        text_ += family_ + "_bucket" + with(labels, label("le", le)) + " " +
                 std::to_string(cumulative) + "\n";
    }
    const std::string braced = labels.empty() ? "" : "{" + labels + "}";
    text_ += family_ + "_count" + braced + " " + std::to_string(cumulative) + "\n";
    text_ += family_ + "_sum" + braced + " " + seconds(h.sum_ns) + "\n";
}

std::string Exposition::finish() const {
    return format_ == Format::openmetrics ? text_ + "# EOF\n" : text_;
}

void add_process_metrics(Exposition& out, const CacheStats& s) {
    out.counter("kcache_requests",
                "Requests of this process, by the rung that answered (none: "
                "nothing did) and the status they ended with.");
    for (std::size_t r = 0; r < kRungCount; ++r) {
        for (std::size_t st = 0; st < kStatusCount; ++st) {
            if (s.requests[r][st] > 0) {
                out.sample(label("rung", to_string(static_cast<Rung>(r))) + "," +
                               label("result", to_string(static_cast<StatusCode>(st))),
                           s.requests[r][st]);
            }
        }
    }
    out.histogram("kcache_request_duration_seconds",
                  "Time from a request's call to its answer, every request of this process.");
    out.sample("", s.request);
    out.histogram("kcache_answer_duration_seconds",
                  "Time from a request's call to its answer, by the rung that answered.");
    for (std::size_t r = 0; r < kRungCount; ++r) {
        out.sample(label("rung", to_string(static_cast<Rung>(r))), s.answered[r]);
    }
    out.histogram("kcache_compile_duration_seconds",
                  "Wall time of compiles in the kcache-jit helper, once per compile.");
    out.sample("", s.compile);
    out.histogram("kcache_load_duration_seconds",
                  "Time the driver took to make a program of binary bytes.");
    out.sample("", s.load);
    out.histogram("kcache_remote_duration_seconds",
                  "Remote tier requests: downloads (get) and uploads (put).");
    out.sample(label("op", "get"), s.remote_get);
    out.sample(label("op", "put"), s.remote_put);
    add_cache_counters(out, s);
}

}  // namespace kcache::metrics
