// The names kcache knows, and the KCACHE_* variables of an environment that
// are none of them, each with the closest known name: a typo such as
// KCACHE_JIT_TIMEOUT=2s is named instead of silently changing nothing.

#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "kcache/common/log.hpp"
#include "kcache/config/setting_table.hpp"
#include "kcache/config/text.hpp"

namespace kcache::service {
namespace {

// The KCACHE_* variables read that are no setting: the config file's path,
// the log level, the compiler's and the layer's own, a diagnostic setting.
constexpr const char* kOtherVariables[] = {
    "KCACHE_CONFIG",              // the config file (config.cpp)
    "KCACHE_LOG_LEVEL",           // the default log sink's level (common/log.cpp)
    "KCACHE_PARENT_PID",          // set for kcache-jit by its parent (compiler)
    "KCACHE_LAYER_PATH",          // the layer `kcache run` enables (tools, layer tests)
    "KCACHE_LAYER_INCLUDE_DIRS",  // the driver's default #include directories (layer)
    "KCACHE_RELEASER",            // the context teardown's diagnostic setting (releaser.cpp)
    "KCACHE_EXAMPLES_DIR",        // the Python examples' tests
};

// Families read by the tests, their harness and layers, and the benches.
constexpr const char* kOtherPrefixes[] = {"KCACHE_TEST_", "KCACHE_FAULT_", "KCACHE_BENCH_"};

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::vector<std::string> known_variables() {
    std::vector<std::string> names(std::begin(kOtherVariables), std::end(kOtherVariables));
    for (const SettingRow& r : setting_rows()) {
        if (r.configurable() && std::string_view(r.env).starts_with("KCACHE_")) {
            names.emplace_back(r.env);
        }
    }
    return names;
}

bool known(std::string_view name, const std::vector<std::string>& names) {
    for (const char* prefix : kOtherPrefixes) {
        if (name.starts_with(prefix)) {
            return true;
        }
    }
    return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::string closest(std::string_view name, const std::vector<std::string>& names) {
    std::string best;
    std::size_t best_distance = 0;
    for (const std::string& n : names) {
        const std::size_t d = edit_distance(name, n);
        if (best.empty() || d < best_distance) {
            best = n;
            best_distance = d;
        }
    }
    return best;
}

std::string closest_key(std::string_view key) {
    std::vector<std::string> keys;
    for (const SettingRow& r : setting_rows()) {
        if (r.configurable()) {
            keys.emplace_back(r.key);
        }
    }
    return closest(key, keys);
}

std::vector<UnknownVariable> unknown_variables(char** env) {
    std::vector<UnknownVariable> out;
    const std::vector<std::string> names = known_variables();
    for (char** e = env; e != nullptr && *e != nullptr; ++e) {
        const std::string_view entry(*e);
        const auto eq = entry.find('=');
        const std::string_view name = entry.substr(0, eq);
        if (!name.starts_with("KCACHE_") || known(name, names)) {
            continue;
        }
        const std::string_view value =
            eq == std::string_view::npos ? std::string_view() : entry.substr(eq + 1);
        out.push_back({std::string(name), std::string(value), closest(name, names)});
    }
    std::sort(out.begin(), out.end(),
              [](const UnknownVariable& a, const UnknownVariable& b) { return a.name < b.name; });
    return out;
}

void warn_unknown_variables() noexcept {
    static std::mutex mu;
    // Per process: each name once. Never destroyed: the first call may be on
    // the layer's opening thread, which must register no exit handler.
    static auto* warned = new std::set<std::string>;
    try {
        std::lock_guard lock(mu);
        for (const UnknownVariable& u : unknown_variables(environ)) {
            if (warned->insert(u.name).second) {
                logging::warning(u.name + "=\"" + printable(u.value) +
                                 "\": unknown, ignored; did you mean " + u.suggestion + "?");
            }
        }
    } catch (...) {
        // Only allocation can throw: the warning is lost, nothing else.
    }
}

}  // namespace kcache::service
