#pragma once
// The inline bodies of <kcache/kcache.hpp> (include that): the C++ API as
// calls of the C API. Config travels as the config file's keys and text
// (kcache_config_*), a request as its C struct, an answer as a
// kcache_outcome read back field by field.

#include <charconv>
#include <climits>
#include <cstring>
#include <new>

#include "kcache/kcache.hpp"

namespace kcache {
namespace detail {

// Frees what kcache allocated when it goes out of scope.
struct CFree {
    void operator()(void* p) const noexcept { kcache_free(p); }
    void operator()(kcache_config* c) const noexcept { kcache_config_free(c); }
    void operator()(kcache_outcome* o) const noexcept { kcache_outcome_free(o); }
};
using ConfigPtr = std::unique_ptr<kcache_config, CFree>;
using OutcomePtr = std::unique_ptr<kcache_outcome, CFree>;

// Calls `f(key, field)` for every setting of `c` (a Config, const or not)
// that has a field: the rows of <kcache/kcache_settings.def>.
template <class C, class F>
void for_each_setting(C& c, F&& f) {
#define KCACHE_SETTING(key, env, field, ...) f(#key, c.field);
#include "kcache/kcache_settings.def"
#undef KCACHE_SETTING
}

// A setting's text as kcache_config_get writes it.
inline std::string to_text(std::string_view, const std::filesystem::path& p) {
    return p.string();
}
inline std::string to_text(std::string_view, const std::string& s) {
    return s;
}
inline std::string to_text(std::string_view, bool b) {
    return b ? "1" : "0";
}
inline std::string to_text(std::string_view, std::uint64_t n) {
    return std::to_string(n);
}
inline std::string to_text(std::string_view key, std::chrono::milliseconds d) {
    const bool bare = key.size() > 3 && key.substr(key.size() - 3) == "_ms";
    return std::to_string(d.count()) + (bare || d.count() == 0 ? "" : "ms");
}
inline std::string to_text(std::string_view, CanaryPolicy p) {
    return p == CanaryPolicy::off ? "off" : p == CanaryPolicy::enforce ? "enforce" : "warn";
}
template <class T>
std::string to_text(std::string_view, const std::vector<T>& items) {
    const char* sep = std::is_same_v<T, std::string> ? " " : ":";
    std::string out;
    for (const auto& i : items) {
        out += (out.empty() ? "" : sep) + std::string(i);
    }
    return out;
}

// The field of a setting from kcache_config_get's text.
inline void from_text(const std::string& t, std::filesystem::path& p) {
    p = t;
}
inline void from_text(const std::string& t, std::string& s) {
    s = t;
}
inline void from_text(const std::string& t, bool& b) {
    b = t == "1";
}
inline void from_text(const std::string& t, std::uint64_t& n) {
    n = 0;
    std::from_chars(t.data(), t.data() + t.size(), n);
}
inline void from_text(const std::string& t, std::chrono::milliseconds& d) {
    long long ms = 0;
    std::from_chars(t.data(), t.data() + t.size(), ms);  // stops at "ms"
    d = std::chrono::milliseconds(ms);
}
inline void from_text(const std::string& t, CanaryPolicy& p) {
    p = t == "off"       ? CanaryPolicy::off
        : t == "enforce" ? CanaryPolicy::enforce
                         : CanaryPolicy::warn;
}
template <class T>
void from_text(const std::string& t, std::vector<T>& items) {
    const char sep = std::is_same_v<T, std::string> ? ' ' : ':';
    items.clear();
    for (std::size_t start = 0; start < t.size();) {
        auto end = t.find(sep, start);
        end = end == std::string::npos ? t.size() : end;
        if (end > start) {
            items.emplace_back(t.substr(start, end - start));
        }
        start = end + 1;
    }
}

// kcache_config_get's text of `key` ("" when the library has no such key).
inline std::string get_text(const kcache_config* c, const char* key) {
    char* v = nullptr;
    std::string out;
    if (kcache_config_get(c, key, &v) == KCACHE_STATUS_OK && v != nullptr) {
        out = v;
    }
    kcache_free(v);
    return out;
}

// An Outcome of `status` with the thread's last C message.
inline Outcome failed(kcache_status status) {
    Outcome o;
    o.status = static_cast<StatusCode>(status);
    o.message = kcache_last_error();
    return o;
}

// The C outcome `c` (NULL: `status` and the last message) as an Outcome.
inline Outcome outcome_of(const kcache_outcome* c, kcache_status status) {
    if (c == nullptr) {
        return failed(status);
    }
    Outcome o;
    o.status = static_cast<StatusCode>(kcache_outcome_status(c));
    o.rung = static_cast<Rung>(kcache_outcome_rung(c));
    o.message = kcache_outcome_message(c);
    o.key = kcache_outcome_key(c);
    o.total = std::chrono::microseconds(kcache_outcome_total_us(c));
    o.compile = std::chrono::microseconds(kcache_outcome_compile_us(c));
    o.resident = kcache_outcome_resident(c) != 0;
    const std::size_t n = kcache_outcome_miss_count(c);
    o.misses.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        kcache_rung rung = KCACHE_RUNG_NONE;
        kcache_miss_cause cause = KCACHE_MISS_OTHER;
        const char* detail = "";
        kcache_outcome_miss(c, i, &rung, &cause, &detail);
        o.misses.emplace_back(static_cast<Rung>(rung), static_cast<MissCause>(cause), detail);
    }
    return o;
}

// The C configuration of `config`: the library's defaults, then every
// setting whose text differs from them, then the settings this header has
// no field for that `config.origins` carries. "" or what is wrong.
inline std::string to_c(const Config& config, ConfigPtr& out) {
    kcache_config* raw = nullptr;
    if (kcache_config_new(&raw) != KCACHE_STATUS_OK) {
        return kcache_last_error();
    }
    out.reset(raw);
    std::string error;
    auto set = [&](const char* key, const std::string& text) {
        if (error.empty() && kcache_config_set(raw, key, text.c_str()) != KCACHE_STATUS_OK) {
            error = kcache_last_error();
        }
    };
    std::map<std::string, bool> fields;
    for_each_setting(config, [&](const char* key, const auto& field) {
        fields[key] = true;
        if (auto text = to_text(key, field); text != get_text(raw, key)) {
            set(key, text);
        }
    });
    for (const auto& [key, origin] : config.origins) {
        if (!fields.count(key) && origin.second != Source::default_value) {
            set(key.c_str(), origin.first);
        }
    }
    return error;
}

// The Config of the C configuration `c`, with each setting's origin.
inline Config from_c(const kcache_config* c) {
    Config config;
    for_each_setting(config,
                     [&](const char* key, auto& field) { from_text(get_text(c, key), field); });
    for (std::size_t i = 0; const char* key = kcache_config_key(i); ++i) {
        kcache_source source = KCACHE_SOURCE_DEFAULT;
        char* written = nullptr;
        if (kcache_config_origin(c, key, &source, &written) == KCACHE_STATUS_OK) {
            config.origins[key] = {written != nullptr ? written : "", static_cast<Source>(source)};
        }
        kcache_free(written);
    }
    return config;
}

// The C request of `r`; `params` and `entry_points` hold the text it points to.
inline kcache_kernel_request to_c(const KernelRequest& r, std::string& params) {
    for (const auto& [name, value] : r.params) {
        params += (params.empty() ? "" : ",") + name + "=" + value;
    }
    kcache_kernel_request c = KCACHE_KERNEL_REQUEST_INIT;
    c.kernel = r.kernel.c_str();
    c.params = params.c_str();
    c.mode = static_cast<kcache_mode>(r.mode);
    return c;
}

// A deadline as the C requests take it: 0 is the configured default, so a
// given deadline is at least 1 ms (and at most UINT32_MAX ms).
inline uint32_t deadline_ms(const std::optional<std::chrono::milliseconds>& d) {
    if (!d) {
        return 0;
    }
    const auto ms = d->count();
    return ms < 1 ? 1u : ms > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(ms);
}

}  // namespace detail

inline const char* to_string(StatusCode s) noexcept {
    return kcache_enum_name(KCACHE_ENUM_STATUS, static_cast<int>(s));
}
inline const char* to_string(Rung r) noexcept {
    return kcache_enum_name(KCACHE_ENUM_RUNG, static_cast<int>(r));
}
inline const char* to_string(Mode m) noexcept {
    return kcache_enum_name(KCACHE_ENUM_MODE, static_cast<int>(m));
}
inline const char* to_string(MissCause c) noexcept {
    return kcache_enum_name(KCACHE_ENUM_MISS_CAUSE, static_cast<int>(c));
}
inline const char* to_string(Source s) noexcept {
    return kcache_enum_name(KCACHE_ENUM_SOURCE, static_cast<int>(s));
}
inline const char* version() noexcept {
    return kcache_version();
}

inline void set_log_handler(LogHandler handler, LogLevel most_verbose) noexcept {
    if (!handler) {
        kcache_set_log_handler(nullptr, nullptr);
        return;
    }
    auto* held = new (std::nothrow) LogHandler(std::move(handler));
    if (held == nullptr) {
        return;  // the previous handler stays
    }
    kcache_set_log_handler_v3(
        [](kcache_log_level level, const char* message, void* user) {
            try {
                (*static_cast<LogHandler*>(user))(static_cast<LogLevel>(level), message);
            } catch (...) {
                // A handler that throws loses its message, never kcache's call.
            }
        },
        held, [](void* user) { delete static_cast<LogHandler*>(user); },
        static_cast<kcache_log_level>(most_verbose));
}

inline bool load_config(Config& out, std::string& error) noexcept {
    try {
        kcache_config* raw = nullptr;
        if (kcache_config_load(&raw) != KCACHE_STATUS_OK) {
            error = kcache_last_error();
            return false;
        }
        detail::ConfigPtr c(raw);
        out = detail::from_c(c.get());
        return true;
    } catch (const std::exception& e) {
        error = std::string("cannot read the configuration: ") + e.what();
    }
    return false;
}

}  // namespace kcache

#include "kcache/kcache_cache.hpp"
