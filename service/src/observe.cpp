// The service's side of the metrics and the trace (observe.hpp).

#include "observe.hpp"
#include "kcache/common/hot_path.hpp"
#include "kcache/common/serial_calls.hpp"

namespace kcache::service {
namespace {

using Clock = std::chrono::steady_clock;

trace::Asked asked_on(std::string device, Mode mode) {
    trace::Asked asked;
    asked.mode = mode;
    asked.device = std::move(device);
    return asked;
}

}  // namespace

void start_observing(const Config& config) {
    trace::configure(config.trace, config.trace_max_bytes);
    if (config.metrics && !config.metrics_file.empty()) {
        metrics::write_file_periodically(config.metrics_file, config.metrics_interval);
    }
}

remote::RemoteObserver remote_observer(bool metrics) {
    return [metrics](remote::RemoteOp op, Clock::time_point start, bool ok) {
        const auto end = Clock::now();
        const bool get = op == remote::RemoteOp::get;
        if (metrics) {
            metrics::observe(get ? metrics::Timer::remote_get : metrics::Timer::remote_put,
                             end - start);
        }
        trace::span(get ? "remote get" : "remote put", "remote", start, end,
                    {{"result", ok ? "ok" : "failed"}});
    };
}

void observe_compile(bool metrics, Clock::time_point started, const std::string& key_hex,
                     StatusCode status) noexcept {
    const auto end = Clock::now();
    if (metrics) {
        metrics::observe(metrics::Timer::compile, end - started);
    }
    if (trace::on()) {
        try {
            trace::span("compile", "compile", started, end,
                        {{"key", key_hex.substr(0, 16)}, {"status", to_string(status)}});
        } catch (...) {
            // Tracing never fails a compile.
        }
    }
}

KCACHE_HOT_PATH Result<cl::ProgramHandle, LoaderError> observed_load(
    Loader& loader, bool metrics, cl_context context, cl_device_id device,
    std::span<const std::uint8_t> bytes, const std::string& options) {
    trace::Span span("load", "load");
    const auto start = Clock::now();
    auto one_at_a_time = serial_calls::hold();  // locks only for a serialize_loads driver
    auto program = loader.load(context, device, bytes, options);
    one_at_a_time = {};
    if (metrics) {
        metrics::observe(metrics::Timer::load, Clock::now() - start);
    }
    if (span.active()) {
        span.arg("bytes", std::to_string(bytes.size()));
        span.arg("result", program ? "ok" : "rejected");
    }
    return program;
}

void trace_answer(const KernelRequest& request, std::chrono::nanoseconds took,
                  trace::Request& traced, const Outcome& outcome, std::string device) {
    trace::Asked asked = asked_on(std::move(device), request.mode);
    asked.kernel = request.kernel;
    asked.params = request.params;
    traced.finish(Clock::now() - took, asked, outcome);
}

void trace_answer(const SourceRequest& request, std::chrono::nanoseconds took,
                  trace::Request& traced, const Outcome& outcome, std::string device) {
    trace::Asked asked = asked_on(std::move(device), request.mode);
    asked.name = request.name;
    asked.source = request.source;
    asked.options = request.options;
    asked.entry_points = request.entry_points;
    traced.finish(Clock::now() - took, asked, outcome);
}

}  // namespace kcache::service
