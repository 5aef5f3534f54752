// `kcache stats --format openmetrics|prometheus`: the node's store and
// remote counters as a metrics exposition (observe/include/kcache/observe/metrics.hpp
// has the formats), for node_exporter's textfile collector or a scrape.
// Every value here is the node's, kept in the store and the remote tier's
// state file across processes, so counters only grow.

#include <map>

#include "cli.hpp"
#include "kcache/observe/metrics.hpp"
#include "kcache/remote/remote.hpp"
#include "stats_metrics.hpp"

namespace kcache::cli {
namespace {

// The remote counters of each namespace (KCACHE_REMOTE_NAMESPACE), families of
// their own: a lookup counts in each namespace it asked, so these do not sum
// to the totals above.
void namespace_metrics(metrics::Exposition& out, const remote::NamespaceCounters& spaces) {
    using metrics::label;
    if (spaces.empty()) {
        return;
    }
    out.counter("kcache_remote_namespace_lookups",
                "Remote tier lookups asked of each namespace by every process of the node, by "
                "result.");
    for (const auto& [name, c] : spaces) {
        out.sample(label("namespace", name) + "," + label("result", "hit"), c.hits);
        out.sample(label("namespace", name) + "," + label("result", "miss"), c.misses);
    }
    out.counter("kcache_remote_namespace_failures",
                "Lookups of each namespace that failed, by kind (a subset of its misses; "
                "corrupt includes objects no key of the namespace signed).");
    for (const auto& [name, c] : spaces) {
        out.sample(label("namespace", name) + "," + label("kind", "error"), c.errors);
        out.sample(label("namespace", name) + "," + label("kind", "timeout"), c.timeouts);
        out.sample(label("namespace", name) + "," + label("kind", "corrupt"), c.corrupt);
    }
    out.counter("kcache_remote_namespace_uploads",
                "Uploads to the remote tier by namespace (the uploader's own), by result.");
    for (const auto& [name, c] : spaces) {
        out.sample(label("namespace", name) + "," + label("result", "ok"), c.uploads);
        out.sample(label("namespace", name) + "," + label("result", "failed"), c.upload_failures);
    }
}

}  // namespace

std::string node_metrics(store::Store& store, const store::Stats& stats,
                         const std::vector<store::EntryInfo>& entries, metrics::Format format) {
    using metrics::label;
    metrics::Exposition out(format);
    struct Sizes {
        std::uint64_t entries = 0, raw = 0, stored = 0;
    };
    std::map<std::string, Sizes> by_device;
    for (const store::EntryInfo& e : entries) {
        Sizes& s = by_device[e.fields.device_name];
        ++s.entries;
        s.raw += e.raw_size;
        s.stored += e.stored_size;
    }
    out.gauge("kcache_store_entries", "Entries in the user store, by device.");
    for (const auto& [device, s] : by_device) {
        out.sample(label("device", device), s.entries);
    }
    out.gauge("kcache_store_raw_bytes", "Binary bytes the user store holds, by device.");
    for (const auto& [device, s] : by_device) {
        out.sample(label("device", device), s.raw);
    }
    out.gauge("kcache_store_stored_bytes",
              "Bytes the user store's entries take once compressed, by device.");
    for (const auto& [device, s] : by_device) {
        out.sample(label("device", device), s.stored);
    }
    out.counter("kcache_store_evictions", "Entries evicted from the user store to stay in bounds.");
    out.sample("", stats.evictions);
    out.counter("kcache_store_corruptions", "Entries quarantined because they failed a check.");
    out.sample("", stats.corruptions);
    out.counter("kcache_store_lookups",
                "Lookups of the user store's tiers by every process of the node, by tier and "
                "result (hit, or why not).");
    for (const store::TierStats& t : stats.tiers) {
        if (t.name != "user") {
            continue;  // a pack's counters are this process's only: always zero here
        }
        out.sample(label("tier", t.name) + "," + label("result", "hit"), t.hits);
        for (std::size_t r = 0; r < store::kMissReasonCount; ++r) {
            out.sample(label("tier", t.name) + "," +
                           label("result", store::to_string(static_cast<store::MissReason>(r))),
                       t.misses[r]);
        }
    }
    const remote::Counters c = remote::read_stats_file(store.path().parent_path());
    out.counter("kcache_remote_lookups",
                "Remote tier lookups by every process of the node, by result.");
    out.sample(label("result", "hit"), c.hits);
    out.sample(label("result", "miss"), c.misses);
    out.counter("kcache_remote_failures",
                "Remote tier lookups that failed, by kind (a subset of the misses).");
    out.sample(label("kind", "error"), c.errors);
    out.sample(label("kind", "timeout"), c.timeouts);
    out.sample(label("kind", "corrupt"), c.corrupt);
    out.counter("kcache_remote_uploads", "Uploads to the remote tier, by result.");
    out.sample(label("result", "ok"), c.uploads);
    out.sample(label("result", "failed"), c.upload_failures);
    namespace_metrics(out, remote::read_namespace_stats(store.path().parent_path()));
    return out.finish();
}

std::string observe_effective(const Config& c, const std::string& name) {
    if (name == "metrics") {
        return c.metrics ? "true" : "false";
    }
    if (name == "metrics_file") {
        return c.metrics_file.empty() ? "(none)" : c.metrics_file.string();
    }
    if (name == "metrics_interval_ms") {
        return std::to_string(c.metrics_interval.count());
    }
    if (name == "trace") {
        return c.trace.empty() ? "(off)" : c.trace;
    }
    return std::to_string(c.trace_max_bytes) + " (" + human_size(c.trace_max_bytes) + ")";
}

}  // namespace kcache::cli
