#pragma once
// What the service tells the metrics and the trace (docs/design.md,
// "Metrics and trace"), called at the rung boundaries: the facade after each
// answer, the compile, the publish step, every load (observed_load); the
// remote client (RemoteObserver) reports its own.

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "kcache/observe/metrics.hpp"
#include "kcache/observe/trace.hpp"
#include "kcache/remote/remote.hpp"
#include "kcache/service/loader.hpp"
#include "kcache/service/service_api.hpp"

namespace kcache::service {

// Starts what `config` asks of the process: the trace, the metrics file.
void start_observing(const Config& config);

// The remote client's observer: get/put histograms (when `metrics`) and spans.
remote::RemoteObserver remote_observer(bool metrics);

// `loader.load(...)` timed: the driver's time to make a program of `bytes`
// goes to the metrics (kcache_load_duration_seconds, when `metrics`) and,
// when the trace is on, is a "load" span of the request. A plain function
// at the rungs' call, not a wrapper loader: a new context's hit finds this
// path cold, and a second object and table of virtual functions per call
// were measurable there.
Result<cl::ProgramHandle, LoaderError> observed_load(Loader& loader, bool metrics,
                                                     cl_context context, cl_device_id device,
                                                     std::span<const std::uint8_t> bytes,
                                                     const std::string& options);

// A compile in the helper that began at `started` and ended now with
// `status`, for key `key_hex`: its histogram (when `metrics`) and its span.
void observe_compile(bool metrics, std::chrono::steady_clock::time_point started,
                     const std::string& key_hex, StatusCode status) noexcept;

// The trace record of an answered request (a registry or the caller's own
// kernel) that took `took`, asked on the device named `device`.
void trace_answer(const KernelRequest& request, std::chrono::nanoseconds took,
                  trace::Request& traced, const Outcome& outcome, std::string device);
void trace_answer(const SourceRequest& request, std::chrono::nanoseconds took,
                  trace::Request& traced, const Outcome& outcome, std::string device);

// After every answer, `took` after the call: the request's metrics (when
// `config.metrics`; a few adds to this thread's cells) and, when traced, its
// record (`device_name()` gives the device's name; called only then).
template <class Request, class DeviceName>
void observe_answer(const Config& config, const Request& request, std::chrono::nanoseconds took,
                    trace::Request& traced, const Outcome& outcome,
                    DeviceName&& device_name) noexcept {
    if (config.metrics) {
        metrics::observe_request(outcome.rung, outcome.status, took);
    }
    if (traced.active()) {
        try {
            trace_answer(request, took, traced, outcome, device_name());
        } catch (...) {
            // Tracing never fails a request.
        }
    }
}

}  // namespace kcache::service
