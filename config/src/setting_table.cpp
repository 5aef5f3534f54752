// The settings' rows (setting_table.hpp), made from kcache_settings.def: how
// each kind of text becomes a field of Config and back, and the further
// checks some rows name.

#include "kcache/config/setting_table.hpp"

#include <algorithm>
#include <filesystem>
#include <type_traits>

#include "kcache/config/quantity.hpp"
#include "kcache/remote/namespaces.hpp"
#include "kcache/remote/schemes.hpp"

namespace kcache::service {
namespace {

using Paths = std::vector<std::filesystem::path>;
using Words = std::vector<std::string>;

// Every boolean is one of these words exactly (no surrounding space, lower
// case); the message lists them all.
constexpr const char* kBoolWords =
    "expected 1, true, yes or on (enabled); 0, false, no, off or an empty value (disabled)";

constexpr std::pair<const char*, CanaryPolicy> kPolicies[] = {
    {"off", CanaryPolicy::off}, {"warn", CanaryPolicy::warn}, {"enforce", CanaryPolicy::enforce}};

Paths split_paths(const std::string& v) {
    Paths out;
    for (std::size_t start = 0; start <= v.size();) {
        auto end = std::min(v.find(':', start), v.size());
        if (end > start) {
            out.emplace_back(v.substr(start, end - start));
        }
        start = end + 1;
    }
    return out;
}

Words split_words(const std::string& v) {
    Words out;
    std::size_t start = 0;
    while ((start = v.find_first_not_of(" \t", start)) != std::string::npos) {
        auto end = v.find_first_of(" \t", start);
        out.push_back(v.substr(start, end == std::string::npos ? end : end - start));
        start = end;
    }
    return out;
}

template <class T>
std::string joined(const std::vector<T>& items, const char* sep) {
    std::string out;
    for (const auto& i : items) {
        out += (out.empty() ? "" : sep) + std::string(i);
    }
    return out;
}

// The field types, read from text under the row's kind and bounds.
std::string read(const SettingRow&, bool& out, const std::string& v) {
    for (std::string_view word : {"1", "true", "yes", "on"}) {
        if (v == word) {
            return (out = true, "");
        }
    }
    for (std::string_view word : {"0", "false", "no", "off", ""}) {
        if (v == word) {
            return (out = false, "");
        }
    }
    return kBoolWords;
}

std::string read(const SettingRow& r, std::uint64_t& out, const std::string& v) {
    auto n = parse_size(v);
    if (r.kind == SettingKind::count) {
        const bool digits = !v.empty() && v.back() >= '0' && v.back() <= '9';
        if (!n || !digits || *n < r.low || *n > r.high) {
            return "expected " + accepted(r);
        }
    } else if (!n) {
        return n.error().message;
    } else if (*n < r.low) {
        return "expected " + accepted(r);
    }
    out = *n;
    return {};
}

std::string read(const SettingRow& r, std::chrono::milliseconds& out, const std::string& v) {
    const bool seconds = r.kind == SettingKind::seconds;
    auto d = parse_duration(seconds && v.empty() ? "0" : v,
                            seconds ? BareUnit::seconds : BareUnit::milliseconds);
    const auto ms = d ? static_cast<std::uint64_t>(d->count()) : 0;
    if (!d || d->count() < 0 || ms < r.low || (r.high != 0 && ms > r.high)) {
        return "expected " + accepted(r);
    }
    out = *d;
    return {};
}

std::string read(const SettingRow&, std::filesystem::path& out, const std::string& v) {
    return (out = v, "");
}
std::string read(const SettingRow&, std::string& out, const std::string& v) {
    return (out = v, "");
}
std::string read(const SettingRow&, Paths& out, const std::string& v) {
    return (out = split_paths(v), "");
}
std::string read(const SettingRow&, Words& out, const std::string& v) {
    return (out = split_words(v), "");
}
std::string read(const SettingRow& r, CanaryPolicy& out, const std::string& v) {
    for (const auto& [word, policy] : kPolicies) {
        if (v == word) {
            return (out = policy, "");
        }
    }
    return "expected " + accepted(r);
}

// The field types as text that read() takes back.
std::string write(const SettingRow&, bool b) {
    return b ? "1" : "0";
}
std::string write(const SettingRow&, std::uint64_t n) {
    return std::to_string(n);
}
std::string write(const SettingRow& r, std::chrono::milliseconds d) {
    const bool bare = r.kind == SettingKind::ms || d.count() == 0;
    return std::to_string(d.count()) + (bare ? "" : "ms");
}
std::string write(const SettingRow&, const std::filesystem::path& p) {
    return p.string();
}
std::string write(const SettingRow&, const std::string& s) {
    return s;
}
std::string write(const SettingRow&, const Paths& p) {
    return joined(p, ":");
}
std::string write(const SettingRow&, const Words& w) {
    return joined(w, " ");
}
std::string write(const SettingRow&, CanaryPolicy p) {
    for (const auto& [word, policy] : kPolicies) {
        if (p == policy) {
            return word;
        }
    }
    return "warn";
}

// size_t and uint64_t are one type on the platforms kcache builds for.
static_assert(std::is_same_v<std::size_t, std::uint64_t>);

template <auto Field>
std::string apply_field(const SettingRow& r, Config& c, const std::string& value) {
    std::string v = value;
    if (std::string why = r.check(v); !why.empty()) {
        return why;
    }
    return read(r, c.*Field, v);
}

template <auto Field>
std::string field_text(const SettingRow& r, const Config& c) {
    return write(r, c.*Field);
}

// "http(s)://host[:port]" with at most a trailing slash: the bucket goes in
// front of the host or after it, so the endpoint carries no path.
bool endpoint_ok(const std::string& e) {
    const auto sep = e.find("://");
    if (sep == std::string::npos || (e.substr(0, sep) != "http" && e.substr(0, sep) != "https")) {
        return false;
    }
    std::string authority = e.substr(sep + 3);
    if (!authority.empty() && authority.back() == '/') {
        authority.pop_back();
    }
    return !authority.empty() && authority.find_first_of("/?#@ \t") == std::string::npos;
}

}  // namespace

// The further checks rows name (kcache_settings.def's `check` column).
namespace checks {
namespace {

std::string none(std::string&) {
    return {};
}
std::string nonempty(std::string& v) {
    return v.empty() ? "must not be empty" : "";
}
std::string tmp_default(std::string& v) {
    v = v.empty() ? "/tmp" : v;
    return {};
}
std::string remote_schemes(std::string& v) {
    for (const auto& u : split_words(v)) {
        if (!remote::scheme_supported(u)) {
            return "expected URLs separated by spaces, of a supported scheme (" +
                   remote::supported_scheme_list() + "), got " + u;
        }
        if (auto ok = remote::check_base_url(u); !ok) {
            return ok.error().message;
        }
    }
    return {};
}
std::string s3_endpoint(std::string& v) {
    return v.empty() || endpoint_ok(v) ? ""
                                       : "expected http://host[:port] or https://host[:port] "
                                         "(no path)";
}
// A region is a word of a-z, 0-9 and '-' (libcurl takes at most 64 bytes).
std::string s3_region(std::string& v) {
    const bool ok = v.size() <= 64 && std::all_of(v.begin(), v.end(), [](char ch) {
                        return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
                    });
    return ok ? "" : "expected a region such as us-east-1 (a-z, 0-9 and '-')";
}
std::string remote_namespaces(std::string& v) {
    auto names = remote::parse_namespaces(v);
    return names ? "" : names.error().message;
}
std::string s3_url_style(std::string& v) {
    return v == "" || v == "path" || v == "virtual"
               ? ""
               : "expected path, virtual, or an empty value (virtual-hosted on AWS, path-style on "
                 "any other endpoint)";
}

}  // namespace
}  // namespace checks

namespace {

constexpr SettingRow kRows[] = {
#define KCACHE_SETTING(key, env, field, kind, low, high, check, doc) \
    {#key,                                                           \
     env,                                                            \
     SettingKind::kind,                                              \
     low,                                                            \
     high,                                                           \
     doc,                                                            \
     &checks::check,                                                 \
     &apply_field<&Config::field>,                                   \
     &field_text<&Config::field>},
#define KCACHE_SETTING_TEXT(key, env, doc) \
    {#key, env, SettingKind::text, 0, 0, doc, &checks::none, nullptr, nullptr},
#include "kcache/kcache_settings.def"
#undef KCACHE_SETTING
#undef KCACHE_SETTING_TEXT
};

}  // namespace

std::span<const SettingRow> setting_rows() noexcept {
    return kRows;
}

const SettingRow* find_setting(std::string_view key) noexcept {
    for (const SettingRow& r : kRows) {
        if (key == r.key) {
            return &r;
        }
    }
    return nullptr;
}

const SettingRow* find_setting_env(std::string_view env) noexcept {
    for (const SettingRow& r : kRows) {
        if (r.configurable() && env == r.env) {
            return &r;
        }
    }
    return nullptr;
}

std::string accepted(const SettingRow& r) {
    const std::string low = std::to_string(r.low), high = std::to_string(r.high);
    switch (r.kind) {
        case SettingKind::flag:
            return "1, true, yes or on; 0, false, no, off or empty";
        case SettingKind::size:
            return r.low <= 1 ? std::string(r.low == 0 ? "a size" : "a positive size") +
                                    " such as 67108864, 64M or 2G"
                              : "a size of at least " + low + " bytes, such as 64M or 1G";
        case SettingKind::count:
            return "a count between " + low + " and " + high;
        case SettingKind::ms:
            return "milliseconds between " + low + " and " + high + " (or 90s, 5m, …)";
        case SettingKind::seconds:
            return r.low == 0 ? "a duration such as 604800 (seconds), 12h or 7d; 0 or empty: none"
                              : "a duration of at least " + std::to_string(r.low / 1000) +
                                    " s, such as 300 (seconds), 90s or 1h";
        case SettingKind::path:
            return "a path";
        case SettingKind::text:
            return "text";
        case SettingKind::paths:
            return "paths separated by ':'";
        case SettingKind::urls:
            return "URLs separated by spaces";
        case SettingKind::policy:
            return "off, warn or enforce";
    }
    return "text";
}

}  // namespace kcache::service
