// CacheCore: an opened kcache::Cache as Python sees it. Every call that may
// wait (store reads, compiles, draining) runs with the GIL released, on a
// shared reference to the Cache so that close() from another thread never
// destroys it under a running call.

#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bindings.hpp"

namespace py = pybind11;

namespace kcache::python {
namespace {

cl_context context_of(HandleInt h) {
    return reinterpret_cast<cl_context>(h);
}
cl_device_id device_of(HandleInt h) {
    return reinterpret_cast<cl_device_id>(h);
}

using Params = std::map<std::string, std::string>;

// The KatReference that calls Python's `reference(inputs)` (GIL taken): it
// gets one list of floats per KAT argument and returns one sequence per
// argument, an output's expected values in its place (others are ignored).
// False when it raises or returns the wrong shape (the Python layer re-raises
// what it raised).
KatReference python_reference(py::function reference) {
    // Held and let go with the GIL, whichever thread drops the last copy.
    std::shared_ptr<py::function> fn(new py::function(std::move(reference)), [](py::function* f) {
        py::gil_scoped_acquire gil;
        delete f;
    });
    return [fn](const std::vector<std::vector<float>>& inputs,
                std::vector<std::vector<float>>& expected) {
        py::gil_scoped_acquire gil;
        try {
            const py::object got = (*fn)(py::cast(inputs));
            if (!py::isinstance<py::sequence>(got) || py::len(got) != expected.size()) {
                return false;
            }
            const auto items = got.cast<py::sequence>();
            for (std::size_t i = 0; i < expected.size(); ++i) {
                if (expected[i].empty()) {
                    continue;
                }
                auto values = items[i].cast<std::vector<float>>();
                if (values.size() != expected[i].size()) {
                    return false;
                }
                expected[i] = std::move(values);
            }
            return true;
        } catch (const py::error_already_set&) {
            return false;
        } catch (const py::cast_error&) {
            return false;
        }
    };
}

class CacheCore {
  public:
    CacheCore(std::unique_ptr<Cache> cache, std::set<std::string> overridden)
        : cache_(std::move(cache)), overridden_(std::move(overridden)) {}
    CacheCore(const CacheCore&) = delete;
    CacheCore& operator=(const CacheCore&) = delete;
    // The last reference may join background compiles: done without the GIL
    // unless the interpreter is shutting down (no other thread runs then).
    ~CacheCore() {
        if (cache_ && !interpreter_finalizing()) {
            py::gil_scoped_release unlocked;
            cache_.reset();
        }
    }

    // Returns the cache for one call; throws ValueError once closed. Called
    // with the GIL held, which orders it against close().
    std::shared_ptr<Cache> get() const {
        if (!cache_) {
            throw py::value_error("this kcache.Cache is closed");
        }
        return cache_;
    }

    void close() {
        auto last = std::move(cache_);
        py::gil_scoped_release unlocked;
        last.reset();  // a call still running keeps its own reference
    }

    py::object program(HandleInt ctx, HandleInt dev, const std::string& kernel, Params params,
                       std::optional<std::int64_t> deadline_ms, const std::string& mode) {
        KernelRequest r{kernel, std::move(params), deadline_of(deadline_ms), mode_of(mode)};
        return make_handle(
            without_gil([&](Cache& c) { return c.program(context_of(ctx), device_of(dev), r); }));
    }

    py::object program_source(HandleInt ctx, HandleInt dev, SourceRequest r,
                              std::optional<std::int64_t> deadline_ms, const std::string& mode) {
        r.deadline = deadline_of(deadline_ms);
        r.mode = mode_of(mode);
        return make_handle(
            without_gil([&](Cache& c) { return c.program(context_of(ctx), device_of(dev), r); }));
    }

    py::tuple binary(HandleInt ctx, HandleInt dev, const std::string& kernel, Params params,
                     std::optional<std::int64_t> deadline_ms, const std::string& mode) {
        KernelRequest r{kernel, std::move(params), deadline_of(deadline_ms), mode_of(mode)};
        Binary b =
            without_gil([&](Cache& c) { return c.binary(context_of(ctx), device_of(dev), r); });
        py::bytes bytes(reinterpret_cast<const char*>(b.bytes.data()), b.bytes.size());
        return py::make_tuple(std::move(bytes), std::move(b.outcome));
    }

    py::dict stats() {
        const CacheStats s = without_gil([](Cache& c) { return c.stats(); });
        py::dict d;
#define KCACHE_COUNTER(field, frozen, source, doc) d[#field] = s.field;
#include "kcache/kcache_counters.def"
#undef KCACHE_COUNTER
        add_metrics(d, s);
        return d;
    }

    // The process's histograms ({"count", "sum_ns", "buckets"}) under
    // "latency", their bounds, and the requests by rung and status.
    static void add_metrics(py::dict& d, const CacheStats& s) {
        const auto hist = [](const LatencyHistogram& h) {
            py::dict x;
            x["count"] = h.count;
            x["sum_ns"] = h.sum_ns;
            x["buckets"] = std::vector<std::uint64_t>(h.buckets.begin(), h.buckets.end());
            return x;
        };
        py::dict latency, answered, requests;
        for (std::size_t r = 0; r < kRungCount; ++r) {
            const char* rung = to_string(static_cast<Rung>(r));
            answered[rung] = hist(s.answered[r]);
            py::dict by_status;
            for (std::size_t st = 0; st < kStatusCount; ++st) {
                if (s.requests[r][st] > 0) {
                    by_status[to_string(static_cast<StatusCode>(st))] = s.requests[r][st];
                }
            }
            requests[rung] = by_status;
        }
        latency["request"] = hist(s.request);
        latency["answered"] = answered;
        latency["compile"] = hist(s.compile);
        latency["load"] = hist(s.load);
        latency["remote_get"] = hist(s.remote_get);
        latency["remote_put"] = hist(s.remote_put);
        d["latency"] = latency;
        d["latency_bounds_ns"] =
            std::vector<std::uint64_t>(kLatencyBoundsNs.begin(), kLatencyBoundsNs.end());
        d["requests"] = requests;
    }

    std::size_t forget(HandleInt ctx) {
        return without_gil([&](Cache& c) { return c.forget(context_of(ctx)); });
    }

    void drain(std::int64_t limit_ms) {
        without_gil([&](Cache& c) {
            c.drain(std::chrono::milliseconds(limit_ms));
            return 0;
        });
    }

    py::dict config() const {
        auto cache = get();
        const Config& c = cache->config();
        std::vector<std::string> packs;
        for (const auto& p : c.packs) {
            packs.push_back(p.string());
        }
        py::dict origins;
        for (const auto& [key, value] : c.origins) {
            const bool given = overridden_.count(key) != 0;
            origins[py::str(key)] =
                py::make_tuple(value.first, given ? "argument" : to_string(value.second));
        }
        py::dict d;
        d["dir"] = c.dir.string();
        d["max_size"] = c.max_bytes;
        d["jit_timeout"] = static_cast<double>(c.jit_timeout.count()) / 1e3;
        d["disabled"] = c.disabled;
        d["read_only"] = c.read_only;
        d["packs"] = packs;
        d["jit_helper"] = c.jit_helper;
        d["device_db"] = c.device_db.string();
        d["tmpdir"] = c.tmpdir.string();
        d["max_programs"] = c.max_programs;
        d["max_resident_bytes"] = c.max_resident_bytes;
        d["max_hot_bytes"] = c.max_hot_bytes;
        d["origins"] = origins;
        return d;
    }

  private:
    // Returns `f(cache)`, run without the GIL on this call's own reference
    // (dropped before the GIL is taken again: it may be the last one).
    template <class F>
    std::invoke_result_t<F, Cache&> without_gil(F&& f) const {
        auto cache = get();
        py::gil_scoped_release unlocked;
        auto result = f(*cache);
        cache.reset();
        return result;
    }

    static bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
        return Py_IsFinalizing() != 0;
#else
        return _Py_IsFinalizing() != 0;
#endif
    }

    std::shared_ptr<Cache> cache_;
    std::set<std::string> overridden_;  // config keys the caller passed explicitly
};

// Configuration from the environment and config file, then the caller's
// overrides (absent: keep the resolved value).
struct Overrides {
    std::optional<std::string> dir;
    std::optional<std::vector<std::string>> packs;
    std::optional<std::int64_t> jit_timeout_ms;
    std::optional<bool> read_only;
    std::optional<std::uint64_t> max_size;
};

void apply(const Overrides& o, Config& c, std::set<std::string>& given) {
    auto note = [&](const char* key, std::string value) {
        c.origins[key].first = std::move(value);
        given.insert(key);
    };
    if (o.dir) {
        c.dir = *o.dir;
        note("dir", *o.dir);
    }
    if (o.packs) {
        c.packs.assign(o.packs->begin(), o.packs->end());
        std::string joined;
        for (const auto& p : *o.packs) {
            joined += (joined.empty() ? "" : ":") + p;
        }
        note("packs", joined);
    }
    if (o.jit_timeout_ms) {
        c.jit_timeout = std::chrono::milliseconds(*o.jit_timeout_ms);
        note("jit_timeout_ms", std::to_string(*o.jit_timeout_ms));
    }
    if (o.read_only) {
        c.read_only = *o.read_only;
        note("readonly", *o.read_only ? "1" : "0");
    }
    if (o.max_size) {
        c.max_bytes = *o.max_size;
        note("max_size", std::to_string(*o.max_size));
    }
}

// Returns (CacheCore, outcome) or (None, outcome saying why not).
py::tuple open_cache(const Overrides& overrides) {
    Config config;
    std::string error;
    Outcome outcome;
    if (!load_config(config, error)) {
        outcome.status = StatusCode::config_error;
        outcome.message = std::move(error);
        return py::make_tuple(py::none(), outcome);
    }
    std::set<std::string> given;
    apply(overrides, config, given);
    std::unique_ptr<Cache> cache;
    {
        py::gil_scoped_release unlocked;
        cache = Cache::open(config, &outcome);
    }
    if (!cache) {
        return py::make_tuple(py::none(), outcome);
    }
    return py::make_tuple(py::cast(std::make_unique<CacheCore>(std::move(cache), given)), outcome);
}

}  // namespace

void bind_cache(py::module_& m) {
    py::class_<CacheCore>(m, "CacheCore",
                          "An opened cache (the C++ kcache::Cache); use kcache.Cache instead.")
        .def("program", &CacheCore::program, py::arg("context"), py::arg("device"),
             py::arg("kernel"), py::arg("params"), py::arg("deadline_ms"), py::arg("mode"))
        .def(
            "program_source",
            [](CacheCore& self, HandleInt ctx, HandleInt dev, std::string name, std::string source,
               std::string options, std::vector<std::string> entry_points,
               std::size_t warmup_local_size, std::optional<std::int64_t> deadline_ms,
               const std::string& mode, std::string kat,
               std::optional<py::function> kat_reference) {
                SourceRequest r;
                r.name = std::move(name);
                r.source = std::move(source);
                r.options = std::move(options);
                r.entry_points = std::move(entry_points);
                r.warmup_local_size = warmup_local_size;
                r.kat = std::move(kat);
                if (kat_reference) {
                    r.kat_reference = python_reference(std::move(*kat_reference));
                }
                return self.program_source(ctx, dev, std::move(r), deadline_ms, mode);
            },
            py::arg("context"), py::arg("device"), py::arg("name"), py::arg("source"),
            py::arg("options"), py::arg("entry_points"), py::arg("warmup_local_size"),
            py::arg("deadline_ms"), py::arg("mode"), py::arg("kat") = "",
            py::arg("kat_reference") = py::none())
        .def("binary", &CacheCore::binary, py::arg("context"), py::arg("device"), py::arg("kernel"),
             py::arg("params"), py::arg("deadline_ms"), py::arg("mode"))
        .def("stats", &CacheCore::stats)
        .def("forget", &CacheCore::forget, py::arg("context"))
        .def("drain", &CacheCore::drain, py::arg("limit_ms"))
        .def("config", &CacheCore::config)
        .def("close", &CacheCore::close);

    m.def(
        "open_cache",
        [](std::optional<std::string> dir, std::optional<std::vector<std::string>> packs,
           std::optional<std::int64_t> jit_timeout_ms, std::optional<bool> read_only,
           std::optional<std::uint64_t> max_size) {
            return open_cache(
                Overrides{std::move(dir), std::move(packs), jit_timeout_ms, read_only, max_size});
        },
        py::arg("dir"), py::arg("packs"), py::arg("jit_timeout_ms"), py::arg("read_only"),
        py::arg("max_size"),
        "Opens a cache from the KCACHE_* environment and config file, with the given "
        "values (None: keep the resolved one) taking precedence. Returns (CacheCore or "
        "None, Outcome).");
}

}  // namespace kcache::python
