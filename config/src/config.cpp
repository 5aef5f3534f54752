// Configuration: KCACHE_* environment variables, then the config file, then
// defaults, for every setting of <kcache/kcache_settings.def>. Config file
// grammar (one setting per line):
//   line    := blank | '#' comment | key ws* '=' ws* value
//   key     := a key of kcache_settings.def (each has its KCACHE_* variable)
// Unknown keys and malformed values are errors reported as "file:line: …".

#include <cstdlib>
#include <sstream>
#include <string_view>

#include "kcache/common/read_file.hpp"
#include "kcache/config/config.hpp"
#include "kcache/config/setting_table.hpp"
#include "kcache/config/text.hpp"
#include "settings.hpp"

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

// A config file is a few lines; anything larger is not one.
constexpr std::size_t kMaxConfigBytes = 1 << 20;

// Applies the environment's or the config file's `key = value`; returns ""
// or what is wrong ("unknown setting; did you mean …?" for a key).
std::string apply(Config& c, const std::string& key, const std::string& value) {
    const service::SettingRow* row = service::find_setting(key);
    if (row == nullptr || !row->configurable()) {
        return "unknown setting; did you mean " + service::closest_key(key) + "?";
    }
    return row->apply != nullptr ? row->apply(*row, c, value) : "";
}

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

// Where trusted public keys are looked for without configuration.
std::vector<std::filesystem::path> default_trusted_key_dirs() {
    std::vector<std::filesystem::path> dirs{"/etc/kcache/trusted.d"};
    if (auto x = env("XDG_CONFIG_HOME"); !x.empty()) {
        dirs.push_back(std::filesystem::path(x) / "kcache" / "trusted.d");
    } else if (auto h = env("HOME"); !h.empty()) {
        dirs.push_back(std::filesystem::path(h) / ".config" / "kcache" / "trusted.d");
    }
    return dirs;
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
    auto text = read_regular_file(path, kMaxConfigBytes);
    if (!text) {
        if (text.error().code == ReadErrc::not_found && env("KCACHE_CONFIG").empty()) {
            return true;
        }
        error = (env("KCACHE_CONFIG").empty() ? "config file " : "KCACHE_CONFIG: ") +
                service::printable(text.error().message);
        return false;
    }
    std::istringstream in(*text);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        std::string t = trim(line);
        if (t.empty() || t[0] == '#') {
            continue;
        }
        auto eq = t.find('=');
        std::string key = eq == std::string::npos ? t : trim(t.substr(0, eq));
        std::string where = service::printable(path.string()) + ":" + std::to_string(n) + ": ";
        if (n == 1 && t.rfind("\xef\xbb\xbf", 0) == 0) {
            error = where + "the file starts with a UTF-8 byte-order mark (\\xef\\xbb\\xbf); " +
                    "save it without one";
            return false;
        }
        if (eq == std::string::npos) {
            error = where + "expected `key = value`";
            return false;
        }
        std::string value = trim(t.substr(eq + 1));
        if (auto why = apply(c, key, value); !why.empty()) {
            error = where + service::printable(key) + ": " + service::printable(why);
            return false;
        }
        c.origins[key] = {value, Source::config_file};
    }
    return true;
}

// load_config's body; may throw (allocation, filesystem).
bool resolve_config(Config& out, std::string& error) {
    Config c;
    c.dir = default_dir();
    c.trusted_key_dirs = default_trusted_key_dirs();
    for (const service::SettingRow& s : service::setting_rows()) {
        if (s.configurable()) {
            c.origins[s.key] = {"", Source::default_value};
        }
    }
    if (!read_file(c, error)) {
        return false;
    }
    for (const service::SettingRow& s : service::setting_rows()) {
        const char* v = s.configurable() ? std::getenv(s.env) : nullptr;
        if (v == nullptr) {
            continue;
        }
        // A boolean is taken as written (" 1" is no boolean); other values
        // lose surrounding blanks, as in the config file.
        const std::string value = s.kind == service::SettingKind::flag ? std::string(v) : trim(v);
        if (auto why = apply(c, s.key, value); !why.empty()) {
            error = std::string(s.env) + "=\"" + service::printable(v) +
                    "\": " + service::printable(why);
            return false;
        }
        c.origins[s.key] = {value, Source::environment};
    }
    if (c.dir.empty()) {
        error = "no cache directory: set KCACHE_DIR (neither XDG_CACHE_HOME nor HOME is set)";
        return false;
    }
    c.origins["dir"].first = c.dir.string();
    out = std::move(c);
    return true;
}

}  // namespace

bool core::load_config(Config& out, std::string& error) noexcept {
    service::warn_unknown_variables();
    try {
        return resolve_config(out, error);
    } catch (const std::exception& e) {
        error = std::string("cannot read the configuration: ") + e.what();
    } catch (...) {
        error = "cannot read the configuration: unexpected exception";
    }
    return false;
}

std::string service::apply_setting(Config& config, const std::string& key,
                                   const std::string& value) {
    const SettingRow* row = find_setting(key);
    if (row == nullptr) {
        return "unknown setting";
    }
    return row->apply != nullptr ? row->apply(*row, config, value) : "";
}

const char* service::setting_key(std::size_t index) noexcept {
    for (const SettingRow& r : setting_rows()) {
        if (r.configurable() && index-- == 0) {
            return r.key;
        }
    }
    return nullptr;
}

}  // namespace kcache
