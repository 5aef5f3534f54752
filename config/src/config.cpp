// Configuration: KCACHE_* environment variables, then the config file, then
// defaults. Config file grammar (one setting per line):
//   line    := blank | '#' comment | key ws* '=' ws* value
//   key     := a key of kSettings below (each has its KCACHE_* variable)
// Unknown keys and malformed values are errors reported as "file:line: …".

#include <cstdlib>
#include <sstream>
#include <string_view>

#include "kcache/common/read_file.hpp"
#include "kcache/config/config.hpp"
#include "kcache/config/quantity.hpp"
#include "kcache/config/remote_tier.hpp"
#include "kcache/config/text.hpp"
#include "kcache/observe/metrics.hpp"
#include "kcache/remote/schemes.hpp"
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

// Every boolean setting, in the environment and in the config file, is one
// of these words exactly (no surrounding space, lower case); the message
// lists them all.
constexpr const char* kBoolWords =
    "expected 1, true, yes or on (enabled); 0, false, no, off or an empty value (disabled)";

bool parse_bool(std::string_view v, bool& out) {
    for (std::string_view word : {"1", "true", "yes", "on"}) {
        if (v == word) {
            out = true;
            return true;
        }
    }
    for (std::string_view word : {"0", "false", "no", "off", ""}) {
        if (v == word) {
            out = false;
            return true;
        }
    }
    return false;
}

// The boolean settings and the member each sets.
struct Flag {
    const char* key;
    bool Config::*member;
};
constexpr Flag kFlags[] = {
    {"disable", &Config::disabled},
    {"readonly", &Config::read_only},
    {"remote_readonly", &Config::remote_read_only},
    {"remote_netrc", &Config::remote_netrc},
    {"remote_required", &Config::remote_required},
    {"remote_allow_http_token", &Config::remote_allow_http_token},
    {"remote_require_signed", &Config::remote_require_signed},
    {"require_signed_packs", &Config::require_signed_packs},
    {"metrics", &Config::metrics},
};

// The flag named `key`, or nullptr.
const Flag* find_flag(std::string_view key) {
    for (const Flag& f : kFlags) {
        if (key == f.key) {
            return &f;
        }
    }
    return nullptr;
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

constexpr std::uint64_t kDayMs = 24ull * 3600 * 1000;
using service::parse_ms_setting;

// A config file is a few lines; anything larger is not one.
constexpr std::size_t kMaxConfigBytes = 1 << 20;

// A count setting: a plain number up to `most`.
std::optional<std::size_t> parse_count(const std::string& value, std::uint64_t most) {
    auto n = service::parse_size(value);
    if (!n || value.empty() || value.back() < '0' || value.back() > '9' || *n > most) {
        return std::nullopt;
    }
    return static_cast<std::size_t>(*n);
}

// Applies one size, count or duration setting: nullopt when `key` is none
// of them, else "" or what is wrong with `value`.
std::optional<std::string> apply_number(Config& c, const std::string& key,
                                        const std::string& value) {
    if (key == "max_size") {
        auto size = service::parse_size(value);
        if (!size) {
            return size.error();
        }
        if (*size == 0) {
            return "expected a positive size such as 1073741824, 512M or 2G";
        }
        c.max_bytes = *size;
    } else if (key == "jit_timeout_ms") {
        auto ms = service::parse_duration(value, service::BareUnit::milliseconds);
        if (!ms || ms->count() == 0 || *ms > std::chrono::hours(24)) {
            return "expected milliseconds between 1 and 86400000 (or 90s, 5m, …)";
        }
        c.jit_timeout = *ms;
    } else if (key == "jit_helpers") {
        auto n = parse_count(value, 256);
        if (!n) {
            return "expected a number of helpers between 0 and 256";
        }
        c.jit_helpers = *n;
    } else if (key == "jit_idle_ms") {
        if (!parse_ms_setting(value, kDayMs, c.jit_idle)) {
            return "expected milliseconds between 1 and 86400000";
        }
    } else if (key == "max_programs") {
        auto n = parse_count(value, 1'000'000);
        if (!n) {
            return "expected a count between 0 and 1000000";
        }
        c.max_programs = *n;
    } else if (key == "max_resident_bytes" || key == "max_hot_bytes") {
        auto n = service::parse_size(value);
        if (!n) {
            return "expected a size such as 67108864, 64M or 0 (off)";
        }
        (key == "max_hot_bytes" ? c.max_hot_bytes : c.max_resident_bytes) = *n;
    } else {
        return std::nullopt;
    }
    return std::string();
}

// Applies one setting; returns "" or what is wrong with `value`.
std::string apply(Config& c, const std::string& key, const std::string& value) {
    if (const Flag* flag = find_flag(key)) {
        return parse_bool(value, c.*(flag->member)) ? "" : kBoolWords;
    }
    if (key.rfind("remote", 0) == 0) {
        return service::apply_remote_setting(c, key, value);
    }
    if (key.rfind("metrics_", 0) == 0 || key.rfind("trace", 0) == 0) {
        return metrics::apply_setting(c, key, value);
    }
    if (key == "canary") {
        return service::apply_canary_policy(c, value);
    }
    if (auto done = apply_number(c, key, value)) {
        return *done;
    }
    if (key == "dir") {
        if (value.empty()) {
            return "must not be empty";
        }
        c.dir = value;
    } else if (key == "packs") {
        c.packs = split_paths(value);
    } else if (key == "jit_path") {
        c.jit_helper = value;
    } else if (key == "device_db") {
        c.device_db = value;
    } else if (key == "tmpdir") {
        c.tmpdir = value.empty() ? "/tmp" : value;
    } else if (key == "trusted_keys") {
        c.trusted_keys = split_paths(value);
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
    {"jit_helpers", "KCACHE_JIT_HELPERS"},
    {"jit_idle_ms", "KCACHE_JIT_IDLE_MS"},
    {"device_db", "KCACHE_DEVICE_DB"},
    {"tmpdir", "TMPDIR"},  // the system's variable: no KCACHE_ prefix
    {"remote", "KCACHE_REMOTE"},
    {"remote_readonly", "KCACHE_REMOTE_READONLY"},
    {"remote_timeout_ms", "KCACHE_REMOTE_TIMEOUT_MS"},
    {"remote_connect_timeout_ms", "KCACHE_REMOTE_CONNECT_TIMEOUT_MS"},
    {"remote_token_file", "KCACHE_REMOTE_TOKEN_FILE"},
    {"remote_netrc", "KCACHE_REMOTE_NETRC"},
    {"remote_ca", "KCACHE_REMOTE_CA"},
    {"remote_required", "KCACHE_REMOTE_REQUIRED"},
    {"remote_breaker_ms", "KCACHE_REMOTE_BREAKER_MS"},
    {"remote_allow_http_token", "KCACHE_REMOTE_ALLOW_HTTP_TOKEN"},
    {"remote_require_signed", "KCACHE_REMOTE_REQUIRE_SIGNED"},
    {"remote_signing_key", "KCACHE_REMOTE_SIGNING_KEY"},
    {"remote_ttl", "KCACHE_REMOTE_TTL"},
    {"remote_trusted_builders", "KCACHE_REMOTE_TRUSTED_BUILDERS"},
    {"remote_s3_endpoint", "KCACHE_REMOTE_S3_ENDPOINT"},
    {"remote_s3_region", "KCACHE_REMOTE_S3_REGION"},
    {"remote_s3_url_style", "KCACHE_REMOTE_S3_URL_STYLE"},
    {"remote_s3_credentials_file", "KCACHE_REMOTE_S3_CREDENTIALS_FILE"},
    {"remote_s3_profile", "KCACHE_REMOTE_S3_PROFILE"},
    {"max_programs", "KCACHE_MAX_PROGRAMS"},
    {"max_resident_bytes", "KCACHE_MAX_RESIDENT_BYTES"},
    {"max_hot_bytes", "KCACHE_MAX_HOT_BYTES"},
    {"trusted_keys", "KCACHE_TRUSTED_KEYS"},
    {"require_signed_packs", "KCACHE_REQUIRE_SIGNED_PACKS"},
    {"canary", "KCACHE_CANARY"},
    {"metrics", "KCACHE_METRICS"},
    {"metrics_file", "KCACHE_METRICS_FILE"},
    {"metrics_interval_ms", "KCACHE_METRICS_INTERVAL_MS"},
    {"trace", "KCACHE_TRACE"},
    {"trace_max_size", "KCACHE_TRACE_MAX_SIZE"},
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
        // A boolean is taken as written (" 1" is no boolean); other values
        // lose surrounding blanks, as in the config file.
        const std::string value = find_flag(s.key) ? std::string(v) : trim(v);
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

bool service::parse_ms_setting(const std::string& value, std::uint64_t max,
                               std::chrono::milliseconds& out) {
    auto ms = service::parse_duration(value, service::BareUnit::milliseconds);
    if (!ms || ms->count() <= 0 || static_cast<std::uint64_t>(ms->count()) > max) {
        return false;
    }
    out = *ms;
    return true;
}

bool core::load_config(Config& out, std::string& error) noexcept {
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
    if (key == kTrustedKeyDirsKey) {
        config.trusted_key_dirs = split_paths(value);
        return {};
    }
    return apply(config, key, value);
}

const char* service::setting_key(std::size_t index) noexcept {
    return index < std::size(kSettings) ? kSettings[index].key : nullptr;
}

}  // namespace kcache
