#pragma once
// The settings of a Config by their keys in the config file, for the C API's
// configuration object (kcache_config_*): apply one, list them, and write a
// value back as text that applies unchanged. The rows behind them are
// kcache/config/setting_table.hpp's.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "kcache/config/config.hpp"

namespace kcache::service {

// Applies `key = value` to `config` as the config file would, and also the
// keys only the API sets (trusted_key_dirs); returns "" or what is wrong
// ("unknown setting" for a key).
std::string apply_setting(Config& config, const std::string& key, const std::string& value);

// The key of setting `index` the environment and the config file set, in
// the table's order; nullptr past the last.
const char* setting_key(std::size_t index) noexcept;

// Whether `key` is a setting (the API's own keys included).
bool is_setting(std::string_view key) noexcept;

// The effective value of `key` in `config` as text apply_setting takes back
// to the same value: booleans 1/0, sizes and counts in decimal, durations in
// milliseconds (bare for a *_ms key, "…ms" otherwise), path lists joined by
// ':', URL lists by ' '. A setting without a field answers the text it was
// given (Config::origins). nullopt: no such key.
std::optional<std::string> setting_text(const Config& config, std::string_view key);

// "off", "warn" or "enforce".
const char* to_string(CanaryPolicy policy) noexcept;

}  // namespace kcache::service
