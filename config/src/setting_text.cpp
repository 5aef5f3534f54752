// Config's settings as text (settings.hpp): the inverse of the config file's
// parser for every key that maps to a field of Config.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "settings.hpp"

namespace kcache::service {
namespace {

std::string bool_text(bool b) {
    return b ? "1" : "0";
}

std::string count_text(std::uint64_t n) {
    return std::to_string(n);
}

std::string joined(const std::vector<std::filesystem::path>& paths) {
    std::string out;
    for (const auto& p : paths) {
        out += (out.empty() ? "" : ":") + p.string();
    }
    return out;
}

std::string joined(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) {
        out += (out.empty() ? "" : " ") + w;
    }
    return out;
}

std::string ms_text(std::chrono::milliseconds d) {
    return std::to_string(d.count());
}

// The settings whose value is one of Config's booleans.
std::optional<std::string> flag_text(const Config& c, std::string_view key) {
    const std::pair<const char*, bool> flags[] = {
        {"disable", c.disabled},
        {"readonly", c.read_only},
        {"remote_readonly", c.remote_read_only},
        {"remote_netrc", c.remote_netrc},
        {"remote_required", c.remote_required},
        {"remote_allow_http_token", c.remote_allow_http_token},
        {"remote_require_signed", c.remote_require_signed},
        {"require_signed_packs", c.require_signed_packs},
        {"metrics", c.metrics},
    };
    for (const auto& [name, value] : flags) {
        if (key == name) {
            return bool_text(value);
        }
    }
    return std::nullopt;
}

// The settings whose value is a path, a string or a list of them.
std::optional<std::string> word_text(const Config& c, std::string_view key) {
    const std::pair<const char*, std::string> words[] = {
        {"dir", c.dir.string()},
        {"packs", joined(c.packs)},
        {"jit_path", c.jit_helper},
        {"device_db", c.device_db.string()},
        {"tmpdir", c.tmpdir.string()},
        {"remote", joined(c.remote_urls)},
        {"remote_token_file", c.remote_token_file.string()},
        {"remote_ca", c.remote_ca.string()},
        {"remote_signing_key", c.remote_signing_key.string()},
        {"remote_s3_endpoint", c.remote_s3_endpoint},
        {"remote_s3_region", c.remote_s3_region},
        {"remote_s3_url_style", c.remote_s3_url_style},
        {"remote_s3_credentials_file", c.remote_s3_credentials_file.string()},
        {"remote_s3_profile", c.remote_s3_profile},
        {"trusted_keys", joined(c.trusted_keys)},
        {kTrustedKeyDirsKey, joined(c.trusted_key_dirs)},
        {"canary", service::to_string(c.canary)},
        {"metrics_file", c.metrics_file.string()},
        {"trace", c.trace},
    };
    for (const auto& [name, value] : words) {
        if (key == name) {
            return value;
        }
    }
    return std::nullopt;
}

// The settings whose value is a number: sizes, counts, durations.
std::optional<std::string> number_text(const Config& c, std::string_view key) {
    const std::pair<const char*, std::string> numbers[] = {
        {"max_size", count_text(c.max_bytes)},
        {"jit_timeout_ms", ms_text(c.jit_timeout)},
        {"jit_helpers", count_text(c.jit_helpers)},
        {"jit_idle_ms", ms_text(c.jit_idle)},
        {"remote_timeout_ms", ms_text(c.remote_timeout)},
        {"remote_connect_timeout_ms", ms_text(c.remote_connect_timeout)},
        {"remote_breaker_ms", ms_text(c.remote_breaker_window)},
        {"remote_ttl", c.remote_ttl.count() == 0 ? "0" : ms_text(c.remote_ttl) + "ms"},
        {"max_programs", count_text(c.max_programs)},
        {"max_resident_bytes", count_text(c.max_resident_bytes)},
        {"max_hot_bytes", count_text(c.max_hot_bytes)},
        {"metrics_interval_ms", ms_text(c.metrics_interval)},
        {"trace_max_size", count_text(c.trace_max_bytes)},
    };
    for (const auto& [name, value] : numbers) {
        if (key == name) {
            return value;
        }
    }
    return std::nullopt;
}

}  // namespace

bool is_setting(std::string_view key) noexcept {
    for (std::size_t i = 0; const char* k = setting_key(i); ++i) {
        if (key == k) {
            return true;
        }
    }
    return key == kTrustedKeyDirsKey;
}

std::optional<std::string> setting_text(const Config& config, std::string_view key) {
    if (!is_setting(key)) {
        return std::nullopt;
    }
    for (auto* of : {&flag_text, &word_text, &number_text}) {
        if (auto t = of(config, key)) {
            return t;
        }
    }
    auto it = config.origins.find(std::string(key));
    return it != config.origins.end() ? it->second.first : std::string();
}

}  // namespace kcache::service
