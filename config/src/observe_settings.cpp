// The observability settings (docs/design.md, "Metrics and trace") but the
// `metrics` flag, applied for config.cpp, which reads them from the
// environment and the config file like every other setting.

#include "kcache/config/quantity.hpp"
#include "kcache/observe/metrics.hpp"

namespace kcache::metrics {

std::string apply_setting(Config& c, const std::string& key, const std::string& value) {
    if (key == "metrics_file") {
        c.metrics_file = value;
    } else if (key == "metrics_interval_ms") {
        auto ms = service::parse_duration(value, service::BareUnit::milliseconds);
        if (!ms || ms->count() < 100 || *ms > std::chrono::hours(24)) {
            return "expected milliseconds between 100 and 86400000 (or 15s, 1m, …)";
        }
        c.metrics_interval = *ms;
    } else if (key == "trace") {
        c.trace = value;
    } else if (key == "trace_max_size") {
        auto size = service::parse_size(value);
        if (!size) {
            return size.error();
        }
        if (*size < 4096) {
            return "expected a size of at least 4096 bytes, such as 64M or 1G";
        }
        c.trace_max_bytes = *size;
    } else {
        return "unknown setting";
    }
    return {};
}

}  // namespace kcache::metrics
