#pragma once
// The process's metrics (docs/design.md, "Metrics and trace"): latency
// histograms with the fixed buckets of kLatencyBoundsNs and request counts
// by rung and status, kept once per process for every Cache whose
// configuration keeps them. Recording is cheap enough for the repeat hit:
// each thread adds to cells of its own (a relaxed load and store, no locked
// instruction, no shared cache line); a snapshot sums the threads' cells and
// those of threads that ended.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "kcache/kcache_types.hpp"
#include "kcache/observe/names.hpp"

namespace kcache::metrics {

// The histograms besides the request's (which is kept overall and by rung).
enum class Timer : std::uint8_t { compile, load, remote_get, remote_put };

// Adds one request that ended with `status` after `total`, answered by `rung`.
void observe_request(Rung rung, StatusCode status, std::chrono::nanoseconds total) noexcept;

// Adds one duration to the histogram of `timer`.
void observe(Timer timer, std::chrono::nanoseconds duration) noexcept;

// The index of the bucket that counts `duration` (kLatencyBoundsNs).
std::size_t bucket_of(std::chrono::nanoseconds duration) noexcept;

// Fills the metrics fields of `out` (request, answered, compile, load,
// remote_get, remote_put, requests) with the process's totals so far.
void snapshot(CacheStats& out) noexcept;

// Fills the counters of `out` that caches count themselves (the .def's rows
// of source cache) with the process's totals: every Cache it opened, those
// closed included (counters.hpp). The other counter fields stay as they are.
void snapshot_counters(CacheStats& out);

// The text exposition formats: OpenMetrics 1.0 (`kcache stats --format
// openmetrics`; ends with "# EOF") and the Prometheus text format 0.0.4 that
// node_exporter's textfile collector reads (KCACHE_METRICS_FILE).
enum class Format { openmetrics, prometheus };

// Builds an exposition: HELP and TYPE lines once per family, samples after
// them. Names follow the Prometheus conventions (kcache_…_total counters,
// …_seconds histograms with cumulative `le` buckets).
class Exposition {
  public:
    explicit Exposition(Format format) : format_(format) {}

    // A counter family `name` (without "_total") with one sample per call
    // of sample(); `labels` is "" or `key="value",…` (values escaped by label()).
    void counter(const std::string& name, const std::string& help);
    void gauge(const std::string& name, const std::string& help);
    void histogram(const std::string& name, const std::string& help);
    // One sample of the family last declared.
    void sample(const std::string& labels, std::uint64_t value);
    void sample(const std::string& labels, const LatencyHistogram& h);
    // The text so far, with the format's terminator.
    std::string finish() const;

  private:
    Format format_;
    std::string family_;
    bool counter_ = false;
    std::string text_;
};

// `key="value"` with the value escaped for the exposition formats.
std::string label(const std::string& key, const std::string& value);

// Adds the process's metrics of `s` to `out`: the fields snapshot() fills,
// and one counter family kcache_<field> per row of source cache of
// <kcache/kcache_counters.def> (snapshot_counters() fills them), its HELP the
// row's doc.
void add_process_metrics(Exposition& out, const CacheStats& s);

// Keeps `path` ("%p" replaced by the process id) holding the process's
// metrics in the Prometheus text format: written now, every `interval` by
// a thread of its own and at exit, each time replaced atomically (a
// temporary file renamed over it). One file per process; a later call with
// another path moves the output there. A file that cannot be written is
// reported once through the log sink. An empty `path` stops the writes.
void write_file_periodically(const std::filesystem::path& path, std::chrono::milliseconds interval);

// Writes the process's metrics to `path` once, atomically; false with `error`.
bool write_file(const std::filesystem::path& path, std::string& error);

}  // namespace kcache::metrics
