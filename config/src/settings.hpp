#pragma once
// The settings of a Config by their keys in the config file, for the C API's
// configuration object (kcache_config_*): apply one, list them, and write a
// value back as text that applies unchanged.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kcache/config/config.hpp"

namespace kcache::service {

// The key only the API sets (the C API's configuration object): the
// directories of trusted *.pub keys, which load_config fills with its defaults.
inline constexpr const char* kTrustedKeyDirsKey = "trusted_key_dirs";

// Applies the config file's line `key = value` to `config` (the one parser of
// config.cpp; also kTrustedKeyDirsKey, ':'-separated); returns "" or what is
// wrong ("unknown setting" for a key).
std::string apply_setting(Config& config, const std::string& key, const std::string& value);

// Parses milliseconds in [1, `max`] into `out` (bare digits are
// milliseconds; "90s", "5m" also work); false on anything else.
bool parse_ms_setting(const std::string& value, std::uint64_t max, std::chrono::milliseconds& out);

// Applies one remote_* setting (remote_config.cpp); returns "" or what is
// wrong ("unknown setting" for a key it does not know).
std::string apply_remote_setting(Config& c, const std::string& key, const std::string& value);

// The key of setting `index`, in the config file's order; nullptr past the
// last.
const char* setting_key(std::size_t index) noexcept;

// Whether `key` is one of setting_key's or kTrustedKeyDirsKey.
bool is_setting(std::string_view key) noexcept;

// The effective value of `key` in `config` as text apply_setting takes back
// to the same value: booleans 1/0, sizes and counts in decimal, durations in
// milliseconds (bare for a *_ms key, "…ms" otherwise), path lists joined by
// ':', URL lists by ' '. A setting this function does not know the field of
// answers the text it was given (Config::origins). nullopt: no such key.
std::optional<std::string> setting_text(const Config& config, std::string_view key);

// Applies the setting "canary" (KCACHE_CANARY) to `c`; returns "" or what is
// wrong with `value`.
std::string apply_canary_policy(Config& c, const std::string& value);
// "off", "warn" or "enforce".
const char* to_string(CanaryPolicy policy) noexcept;

}  // namespace kcache::service
