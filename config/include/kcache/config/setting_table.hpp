#pragma once
// The settings of a Config as rows (one per line of
// <kcache/kcache_settings.def>): what parses the environment and the config
// file, writes values back as text, lists the keys for the C API and tells
// doctor what is known. Adding a setting is its field in Config and its row
// in the .def file.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kcache/kcache_types.hpp"

namespace kcache::service {

// How a setting's text is read (kcache_settings.def says each in words).
enum class SettingKind { flag, size, count, ms, seconds, path, text, paths, urls, policy };

struct SettingRow {
    const char* key;  // the config file's key
    const char* env;  // its environment variable; "" when only the API sets it
    SettingKind kind;
    std::uint64_t low;
    std::uint64_t high;  // 0: no upper bound
    const char* doc;     // one line: what it does
    // Checks (and may rewrite) the text before it is read; "" or what is wrong.
    std::string (*check)(std::string& value);
    // Sets the field from `value`; "" or what is wrong. nullptr: the setting
    // has no field (its text is read from Config::origins where needed).
    std::string (*apply)(const SettingRow& row, Config& c, const std::string& value);
    // The field as text that `apply` takes back to the same value; nullptr
    // with `apply`.
    std::string (*text)(const SettingRow& row, const Config& c);

    // Whether the environment and the config file may set it.
    bool configurable() const noexcept { return env[0] != '\0'; }
};

// Every setting, in the .def file's order.
std::span<const SettingRow> setting_rows() noexcept;

// The row of `key`, or nullptr.
const SettingRow* find_setting(std::string_view key) noexcept;

// The row whose variable is `env`, or nullptr.
const SettingRow* find_setting_env(std::string_view env) noexcept;

// What the row's kind and bounds accept, in words ("milliseconds between 1
// and 86400000"), for error messages and the docs' table.
std::string accepted(const SettingRow& row);

// The closest of `names` to `name` by edit distance (ties: the first);
// "" when `names` is empty.
std::string closest(std::string_view name, const std::vector<std::string>& names);

// The configurable key closest to `key` (the config file's unknown keys).
std::string closest_key(std::string_view key);

// A KCACHE_* variable of the environment that kcache does not read.
struct UnknownVariable {
    std::string name;
    std::string value;
    std::string suggestion;  // the closest known name
};

// The KCACHE_* variables of `env` (NAME=value strings, nullptr-ended)
// that are neither a setting nor another variable kcache or its tests,
// benches and layer read.
std::vector<UnknownVariable> unknown_variables(char** env);

// Logs a warning for each unknown KCACHE_* variable of this process's
// environment, once per process (later calls log nothing).
void warn_unknown_variables() noexcept;

}  // namespace kcache::service
