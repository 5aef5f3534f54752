#pragma once
// The node's metrics for `kcache stats --format openmetrics|prometheus`.

#include <string>
#include <vector>

#include "kcache/observe/metrics.hpp"
#include "kcache/service/service_api.hpp"
#include "kcache/store/store.hpp"

namespace kcache::cli {

// The exposition of the user store's sizes (by device, from `entries`) and
// counters (`stats`), and the node's remote counters kept beside `store`.
std::string node_metrics(store::Store& store, const store::Stats& stats,
                         const std::vector<store::EntryInfo>& entries, metrics::Format format);

// For `kcache doctor`: the effective value of the observability setting
// `name` (metrics, metrics_file, metrics_interval_ms, trace, trace_max_size).
std::string observe_effective(const Config& c, const std::string& name);

}  // namespace kcache::cli
