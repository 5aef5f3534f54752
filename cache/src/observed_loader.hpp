#pragma once
// The loader seam with its loads observed: the driver's time to make a
// program of bytes goes to the metrics (kcache_load_duration_seconds) and,
// when the trace is on, is a "load" span of the request.

#include <memory>

#include "kcache/cache/loader.hpp"

namespace kcache::service {

// `inner` with load() timed (the metrics only when `metrics`); every other
// call goes straight to `inner`.
std::unique_ptr<Loader> observed_loader(std::unique_ptr<Loader> inner, bool metrics);

}  // namespace kcache::service
