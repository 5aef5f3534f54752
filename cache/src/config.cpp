// Configuration: KCACHE_* environment variables, then the config file, then
// defaults. Config file grammar (one setting per line):
//   line    := blank | '#' comment | key ws* '=' ws* value
//   key     := dir | max_size | jit_timeout_ms | disable | readonly | packs | jit_path
//            | max_programs | max_resident_bytes
// Unknown keys and malformed values are errors reported as "file:line: …".

#include <cstdlib>
#include <fstream>
#include <functional>
#include <string_view>

#include "kcache/kcache.hpp"

namespace kcache {
namespace {

std::string trim(std::string_view s) {
    auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) {
        return {};
    }
    auto e = s.find_last_not_of(" \t\r");
    return std::string(s.substr(b, e - b + 1));
}

// Parses "123", "64K", "512M", "2G" (binary units); false on anything else.
bool parse_size(const std::string& v, std::uint64_t& out) {
    if (v.empty()) {
        return false;
    }
    std::size_t i = 0;
    std::uint64_t n = 0;
    for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
        if (n > (UINT64_MAX - 9) / 10) {
            return false;
        }
        n = n * 10 + static_cast<std::uint64_t>(v[i] - '0');
    }
    if (i == 0) {
        return false;
    }
    std::string unit = v.substr(i);
    int shift = unit.empty()                   ? 0
                : (unit == "K" || unit == "k") ? 10
                : (unit == "M" || unit == "m") ? 20
                : (unit == "G" || unit == "g") ? 30
                                               : -1;
    if (shift < 0 || (shift > 0 && n > (UINT64_MAX >> shift))) {
        return false;
    }
    out = n << shift;
    return true;
}

bool parse_bool(const std::string& v, bool& out) {
    if (v == "1" || v == "true" || v == "yes" || v == "on") {
        out = true;
    } else if (v == "0" || v == "false" || v == "no" || v == "off" || v.empty()) {
        out = false;
    } else {
        return false;
    }
    return true;
}

std::vector<std::filesystem::path> split_paths(const std::string& v) {
    std::vector<std::filesystem::path> out;
    std::size_t start = 0;
    while (start <= v.size()) {
        auto end = v.find(':', start);
        if (end == std::string::npos) {
            end = v.size();
        }
        if (end > start) {
            out.emplace_back(v.substr(start, end - start));
        }
        start = end + 1;
    }
    return out;
}

// Applies one setting; returns "" or what is wrong with `value`.
std::string apply(Config& c, const std::string& key, const std::string& value) {
    if (key == "dir") {
        if (value.empty()) {
            return "must not be empty";
        }
        c.dir = value;
    } else if (key == "max_size") {
        if (!parse_size(value, c.max_bytes) || c.max_bytes == 0) {
            return "expected a positive size such as 1073741824, 512M or 2G";
        }
    } else if (key == "jit_timeout_ms") {
        std::uint64_t ms = 0;
        if (!parse_size(value, ms) || value.back() < '0' || value.back() > '9' || ms == 0 ||
            ms > 24ull * 3600 * 1000) {
            return "expected milliseconds between 1 and 86400000";
        }
        c.jit_timeout = std::chrono::milliseconds(ms);
    } else if (key == "disable") {
        if (!parse_bool(value, c.disabled)) {
            return "expected 0, 1, true or false";
        }
    } else if (key == "readonly") {
        if (!parse_bool(value, c.read_only)) {
            return "expected 0, 1, true or false";
        }
    } else if (key == "packs") {
        c.packs = split_paths(value);
    } else if (key == "jit_path") {
        c.jit_helper = value;
    } else if (key == "max_programs") {
        std::uint64_t n = 0;
        if (!parse_size(value, n) || value.back() < '0' || value.back() > '9' || n > 1'000'000) {
            return "expected a count between 0 and 1000000";
        }
        c.max_programs = static_cast<std::size_t>(n);
    } else if (key == "max_resident_bytes") {
        if (!parse_size(value, c.max_resident_bytes)) {
            return "expected a size such as 67108864, 64M or 0 (off)";
        }
    } else {
        return "unknown setting";
    }
    return {};
}

struct Setting {
    const char* key;
    const char* env;
};
constexpr Setting kSettings[] = {
    {"dir", "KCACHE_DIR"},
    {"max_size", "KCACHE_MAX_SIZE"},
    {"jit_timeout_ms", "KCACHE_JIT_TIMEOUT_MS"},
    {"disable", "KCACHE_DISABLE"},
    {"readonly", "KCACHE_READONLY"},
    {"packs", "KCACHE_PACKS"},
    {"jit_path", "KCACHE_JIT_PATH"},
    {"max_programs", "KCACHE_MAX_PROGRAMS"},
    {"max_resident_bytes", "KCACHE_MAX_RESIDENT_BYTES"},
};

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

std::filesystem::path default_dir() {
    if (auto x = env("XDG_CACHE_HOME"); !x.empty()) {
        return std::filesystem::path(x) / "kcache";
    }
    if (auto h = env("HOME"); !h.empty()) {
        return std::filesystem::path(h) / ".cache" / "kcache";
    }
    return {};
}

std::filesystem::path config_file_path() {
    if (auto p = env("KCACHE_CONFIG"); !p.empty()) {
        return p;
    }
    if (auto x = env("XDG_CONFIG_HOME"); !x.empty()) {
        return std::filesystem::path(x) / "kcache" / "config";
    }
    if (auto h = env("HOME"); !h.empty()) {
        return std::filesystem::path(h) / ".config" / "kcache" / "config";
    }
    return {};
}

// Reads the config file (absent is fine unless named by KCACHE_CONFIG).
bool read_file(Config& c, std::string& error) {
    auto path = config_file_path();
    if (path.empty()) {
        return true;
    }
    std::ifstream in(path);
    if (!in) {
        if (!env("KCACHE_CONFIG").empty()) {
            error = "KCACHE_CONFIG: cannot read " + path.string();
            return false;
        }
        return true;
    }
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        std::string t = trim(line);
        if (t.empty() || t[0] == '#') {
            continue;
        }
        auto eq = t.find('=');
        std::string key = eq == std::string::npos ? t : trim(t.substr(0, eq));
        std::string where = path.string() + ":" + std::to_string(n) + ": ";
        if (eq == std::string::npos) {
            error = where + "expected `key = value`";
            return false;
        }
        std::string value = trim(t.substr(eq + 1));
        if (auto why = apply(c, key, value); !why.empty()) {
            error = where + key + ": " + why;
            return false;
        }
        c.origins[key] = {value, Source::config_file};
    }
    return true;
}

}  // namespace

bool load_config(Config& out, std::string& error) {
    Config c;
    c.dir = default_dir();
    for (const auto& s : kSettings) {
        c.origins[s.key] = {"", Source::default_value};
    }
    if (!read_file(c, error)) {
        return false;
    }
    for (const auto& s : kSettings) {
        const char* v = std::getenv(s.env);
        if (v == nullptr) {
            continue;
        }
        if (auto why = apply(c, s.key, trim(v)); !why.empty()) {
            error = std::string(s.env) + "=\"" + v + "\": " + why;
            return false;
        }
        c.origins[s.key] = {trim(v), Source::environment};
    }
    if (c.dir.empty()) {
        error = "no cache directory: set KCACHE_DIR (neither XDG_CACHE_HOME nor HOME is set)";
        return false;
    }
    c.origins["dir"].first = c.dir.string();
    out = std::move(c);
    return true;
}

}  // namespace kcache
