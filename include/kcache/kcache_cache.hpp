#pragma once
// The inline bodies of <kcache/kcache.hpp>'s Cache (include kcache.hpp): the
// open, each request and its answer, and the counters by index read into CacheStats.

#include <algorithm>
#include <unordered_map>

#include "kcache/kcache_detail.hpp"

namespace kcache {
namespace detail {

// CacheStats's values from the counters by index of the library, matched by
// name (for_each_stat), so that a library with more counters, statuses or
// rungs than this header knows fills those it knows.
inline CacheStats stats_of(kcache_cache* cache) {
    std::size_t n = 0;
    if (kcache_stat_values(cache, nullptr, 0, &n) != KCACHE_STATUS_OK) {
        return CacheStats{};
    }
    std::vector<std::uint64_t> values(n);
    if (kcache_stat_values(cache, values.data(), n, &n) != KCACHE_STATUS_OK) {
        return CacheStats{};
    }
    CacheStats out;
    std::unordered_map<std::string, std::uint64_t*> slots;
    for_each_stat(
        out, [&slots](std::string name, std::uint64_t& v) { slots.emplace(std::move(name), &v); });
    for (std::size_t i = 0; i < std::min(n, values.size()); ++i) {
        const char* name = kcache_stat_name(i);
        if (name == nullptr) {
            break;
        }
        if (const auto it = slots.find(name); it != slots.end()) {
            *it->second = values[i];
        }
    }
    return out;
}

// The C reference (kcache_kat_reference) that calls the SourceRequest's
// KatReference at `user`; non-zero when it fails, throws or resizes an output.
inline int call_kat_reference(void* user, std::size_t n_args, const float* const* inputs,
                              const std::size_t* input_counts, float* const* expected,
                              const std::size_t* expected_counts) noexcept {
    try {
        std::vector<std::vector<float>> in(n_args), out(n_args);
        for (std::size_t i = 0; i < n_args; ++i) {
            in[i].assign(inputs[i], inputs[i] + input_counts[i]);
            out[i].assign(expected[i], expected[i] + expected_counts[i]);
        }
        if (!(*static_cast<const KatReference*>(user))(in, out)) {
            return 1;
        }
        for (std::size_t i = 0; i < n_args; ++i) {
            if (out[i].size() != expected_counts[i]) {
                return 1;
            }
            std::copy(out[i].begin(), out[i].end(), expected[i]);
        }
        return 0;
    } catch (...) {
        return 1;
    }
}

}  // namespace detail

inline std::unique_ptr<Cache> Cache::open(const Config& config, Outcome* outcome) noexcept {
    Outcome local;
    Outcome& out = outcome ? *outcome : local;
    try {
        detail::ConfigPtr c;
        if (auto error = detail::to_c(config, c); !error.empty()) {
            out = Outcome{};
            out.status = StatusCode::config_error;
            out.message = error;
            return nullptr;
        }
        kcache_cache* cache = nullptr;
        kcache_outcome* raw = nullptr;
        const auto status = kcache_open_config(c.get(), &cache, &raw);
        detail::OutcomePtr o(raw);
        out = detail::outcome_of(o.get(), status);
        if (cache == nullptr) {
            return nullptr;
        }
        std::unique_ptr<Cache> opened(new (std::nothrow) Cache(cache, Config{}));
        if (!opened) {
            kcache_close(cache);
            out = detail::failed(KCACHE_STATUS_INTERNAL_ERROR);
            return nullptr;
        }
        opened->config_ = config;
        return opened;
    } catch (const std::exception& e) {
        out = Outcome{};
        out.message = e.what();
    }
    return nullptr;
}

inline std::unique_ptr<Cache> Cache::open_default(Outcome* outcome) noexcept {
    Config c;
    std::string error;
    if (!load_config(c, error)) {
        if (outcome) {
            *outcome = Outcome{};
            outcome->status = StatusCode::config_error;
            outcome->message = error;
        }
        return nullptr;
    }
    return open(c, outcome);
}

inline Program Cache::program(cl_context context, cl_device_id device,
                              const KernelRequest& request) noexcept {
    Program p;
    try {
        std::string params;
        auto r = detail::to_c(request, params);
        r.deadline_ms = detail::deadline_ms(request.deadline);
        kcache_outcome* raw = nullptr;
        const auto status =
            kcache_get_kernel_program_v2(cache_, context, device, &r, &p.program_, &raw);
        detail::OutcomePtr o(raw);
        p.outcome_ = detail::outcome_of(o.get(), status);
    } catch (const std::exception& e) {
        p.reset();
        p.outcome_ = Outcome{};
        p.outcome_.message = e.what();
    }
    return p;
}

inline Program Cache::program(cl_context context, cl_device_id device,
                              const SourceRequest& request) noexcept {
    Program p;
    try {
        std::vector<const char*> names;
        for (const auto& e : request.entry_points) {
            names.push_back(e.c_str());
        }
        kcache_source_request r = KCACHE_SOURCE_REQUEST_INIT;
        r.source = request.source.c_str();
        if (is_spirv_module(request.source)) {
            r.il = request.source.data();
            r.il_size = request.source.size();
        }
        r.options = request.options.c_str();
        r.entry_points = names.data();
        r.n_entry_points = names.size();
        r.deadline_ms = detail::deadline_ms(request.deadline);
        r.mode = static_cast<kcache_mode>(request.mode);
        r.name = request.name.c_str();
        r.warmup_local_size = request.warmup_local_size;
        const std::string kat = request.kat.string();
        r.kat_path = kat.empty() ? nullptr : kat.c_str();
        if (request.kat_reference) {
            r.kat_reference = &detail::call_kat_reference;
            r.kat_reference_user = const_cast<KatReference*>(&request.kat_reference);
        }
        std::vector<const char*> unit_sources, unit_options, header_names, header_sources;
        std::vector<size_t> header_counts;
        for (const LinkUnit& u : request.link) {
            unit_sources.push_back(u.source.c_str());
            unit_options.push_back(u.options.c_str());
            header_counts.push_back(u.headers.size());
            for (const auto& [name, text] : u.headers) {
                header_names.push_back(name.c_str());
                header_sources.push_back(text.c_str());
            }
        }
        r.link_sources = unit_sources.data();
        r.link_options = unit_options.data();
        r.n_link_units = unit_sources.size();
        r.link_header_counts = header_counts.data();
        r.link_header_names = header_names.data();
        r.link_header_sources = header_sources.data();
        kcache_outcome* raw = nullptr;
        const auto status =
            kcache_get_source_program_v2(cache_, context, device, &r, &p.program_, &raw);
        detail::OutcomePtr o(raw);
        p.outcome_ = detail::outcome_of(o.get(), status);
    } catch (const std::exception& e) {
        p.reset();
        p.outcome_ = Outcome{};
        p.outcome_.message = e.what();
    }
    return p;
}

inline Binary Cache::binary(cl_context context, cl_device_id device,
                            const KernelRequest& request) noexcept {
    Binary b;
    try {
        std::string params;
        auto r = detail::to_c(request, params);
        r.deadline_ms = detail::deadline_ms(request.deadline);
        unsigned char* bytes = nullptr;
        std::size_t size = 0;
        kcache_outcome* raw = nullptr;
        const auto status =
            kcache_get_kernel_binary_v2(cache_, context, device, &r, &bytes, &size, &raw);
        detail::OutcomePtr o(raw);
        std::unique_ptr<unsigned char, detail::CFree> held(bytes);
        b.outcome = detail::outcome_of(o.get(), status);
        b.bytes.assign(bytes, bytes + size);
    } catch (const std::exception& e) {
        b = Binary{};
        b.outcome.message = e.what();
    }
    return b;
}

inline CacheStats Cache::stats() noexcept {
    try {
        return detail::stats_of(cache_);
    } catch (...) {
        return CacheStats{};  // no memory for the names' table
    }
}

inline std::size_t Cache::forget(cl_context context) noexcept {
    std::size_t dropped = 0;
    kcache_forget_context(cache_, context, &dropped);
    return dropped;
}

inline Outcome Cache::prepare(cl_device_id device) noexcept {
    const kcache_status status = kcache_prepare_device(cache_, device);
    try {
        return detail::failed(status);  // with the thread's last message ("" when ok)
    } catch (...) {
        Outcome o;  // no memory for the message
        o.status = static_cast<StatusCode>(status);
        return o;
    }
}

inline void Cache::drain(std::chrono::milliseconds limit) noexcept {
    kcache_drain(cache_, limit.count() < 0 ? 0 : static_cast<uint64_t>(limit.count()));
}

}  // namespace kcache
