// The C API's configuration object (kcache_config_*) and the open from it:
// every setting by its config-file key, parsed by the one parser of
// config.cpp, written back by settings.hpp.

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "c_api_support.hpp"
#include "settings.hpp"

namespace kcache::c_api {
namespace {

// A malloc copy of `text` for the caller to kcache_free(), or nullptr.
char* copied(const std::string& text) {
    auto* mem = static_cast<char*>(std::malloc(text.size() + 1));
    if (mem != nullptr) {
        std::memcpy(mem, text.c_str(), text.size() + 1);
    }
    return mem;
}

kcache_status config_out(kcache::Config c, kcache_config** out) {
    *out = new (std::nothrow) kcache_config{std::move(c)};
    if (*out == nullptr) {
        return report(StatusCode::internal_error, "out of memory");
    }
    return report(StatusCode::ok, "");
}

// "" when `key` names a setting, else what is wrong.
std::string check_key(const char* function, const char* key) {
    return service::is_setting(key) ? "" : std::string(function) + ": " + key + ": unknown setting";
}

}  // namespace
}  // namespace kcache::c_api

using namespace kcache::c_api;

extern "C" {

kcache_status kcache_config_load(kcache_config** out) try {
    if (out == nullptr) {
        return invalid("kcache_config_load: out is NULL");
    }
    *out = nullptr;
    kcache::Config c;
    std::string error;
    if (!kcache::load_config(c, error)) {
        return report(kcache::StatusCode::config_error, error);
    }
    return config_out(std::move(c), out);
} catch (...) {
    return escaped("kcache_config_load");
}

kcache_status kcache_config_new(kcache_config** out) try {
    if (out == nullptr) {
        return invalid("kcache_config_new: out is NULL");
    }
    *out = nullptr;
    kcache::Config c;
    for (std::size_t i = 0; const char* k = kcache::service::setting_key(i); ++i) {
        c.origins[k] = {"", kcache::Source::default_value};
    }
    return config_out(std::move(c), out);
} catch (...) {
    return escaped("kcache_config_new");
}

kcache_status kcache_config_copy(const kcache_config* config, kcache_config** out) try {
    if (out != nullptr) {
        *out = nullptr;
    }
    if (config == nullptr || out == nullptr) {
        return invalid("kcache_config_copy: config and out must not be NULL");
    }
    return config_out(config->config, out);
} catch (...) {
    return escaped("kcache_config_copy");
}

void kcache_config_free(kcache_config* config) {
    delete config;
}

kcache_status kcache_config_set(kcache_config* config, const char* key, const char* value) try {
    if (config == nullptr || key == nullptr || value == nullptr) {
        return invalid("kcache_config_set: config, key and value must not be NULL");
    }
    if (auto e = check_key("kcache_config_set", key); !e.empty()) {
        return report(kcache::StatusCode::config_error, e);
    }
    kcache::Config c = config->config;  // changed only when the value is good
    if (auto why = kcache::service::apply_setting(c, key, value); !why.empty()) {
        return report(kcache::StatusCode::config_error,
                      std::string("kcache_config_set: ") + key + ": " + why);
    }
    c.origins[key] = {value, kcache::Source::api};
    config->config = std::move(c);
    return report(kcache::StatusCode::ok, "");
} catch (...) {
    return escaped("kcache_config_set");
}

kcache_status kcache_config_get(const kcache_config* config, const char* key, char** value) try {
    if (value != nullptr) {
        *value = nullptr;
    }
    if (config == nullptr || key == nullptr || value == nullptr) {
        return invalid("kcache_config_get: config, key and value must not be NULL");
    }
    if (auto e = check_key("kcache_config_get", key); !e.empty()) {
        return report(kcache::StatusCode::config_error, e);
    }
    *value = copied(kcache::service::setting_text(config->config, key).value_or(""));
    return *value != nullptr ? report(kcache::StatusCode::ok, "")
                             : report(kcache::StatusCode::internal_error, "out of memory");
} catch (...) {
    return escaped("kcache_config_get");
}

kcache_status kcache_config_origin(const kcache_config* config, const char* key,
                                   kcache_source* source, char** written) try {
    if (written != nullptr) {
        *written = nullptr;
    }
    if (config == nullptr || key == nullptr || source == nullptr) {
        return invalid("kcache_config_origin: config, key and source must not be NULL");
    }
    if (auto e = check_key("kcache_config_origin", key); !e.empty()) {
        return report(kcache::StatusCode::config_error, e);
    }
    auto it = config->config.origins.find(key);
    const bool known = it != config->config.origins.end();
    *source = known ? static_cast<kcache_source>(static_cast<int>(it->second.second))
                    : KCACHE_SOURCE_DEFAULT;
    if (written != nullptr && (*written = copied(known ? it->second.first : "")) == nullptr) {
        return report(kcache::StatusCode::internal_error, "out of memory");
    }
    return report(kcache::StatusCode::ok, "");
} catch (...) {
    return escaped("kcache_config_origin");
}

const char* kcache_config_key(size_t index) {
    return kcache::service::setting_key(index);
}

kcache_status kcache_open_config(const kcache_config* config, kcache_cache** out,
                                 kcache_outcome** outcome) try {
    if (outcome != nullptr) {
        *outcome = nullptr;
    }
    if (out != nullptr) {
        *out = nullptr;
    }
    if (config == nullptr || out == nullptr) {
        kcache::Outcome o;
        o.status = kcache::StatusCode::invalid_argument;
        o.message = "kcache_open_config: config and out must not be NULL";
        return answer(std::move(o), outcome);
    }
    kcache::Outcome o;
    auto cache = kcache::Cache::open(config->config, &o);
    if (cache) {
        *out = new kcache_cache{std::move(cache)};
    }
    return answer(std::move(o), outcome);
} catch (...) {
    return escaped("kcache_open_config");
}

kcache_status kcache_cache_config(const kcache_cache* cache, kcache_config** out) try {
    if (out != nullptr) {
        *out = nullptr;
    }
    if (cache == nullptr || out == nullptr) {
        return invalid("kcache_cache_config: cache and out must not be NULL");
    }
    return config_out(cache->cache->config(), out);
} catch (...) {
    return escaped("kcache_cache_config");
}

}  // extern "C"
