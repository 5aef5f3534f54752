#include "cli.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iostream>

namespace kcache::cli {

int report(Exit code, std::string_view command, std::string_view message) {
    std::cerr << "kcache " << command << ": " << message << "\n";
    return static_cast<int>(code);
}

Exit exit_for(const store::StoreError& error) {
    return error.code == store::StoreErrc::invalid_argument ? Exit::usage : Exit::store_error;
}

std::optional<Config> load_cli_config(std::string_view command, int& exit_code) {
    Config config;
    std::string error;
    if (!load_config(config, error)) {
        exit_code = report(Exit::usage, command, "configuration: " + error);
        return std::nullopt;
    }
    return config;
}

std::optional<store::Store> open_user_store(std::string_view command, int& exit_code,
                                            store::OpenMode mode) {
    auto config = load_cli_config(command, exit_code);
    if (!config) {
        return std::nullopt;
    }
    store::Policy policy;
    policy.max_bytes = config->max_bytes;
    policy.mode = config->read_only ? store::OpenMode::read_only : mode;
    auto opened = store::Store::open(config->dir, policy);
    if (!opened) {
        exit_code = report(exit_for(opened.error()), command, opened.error().message);
        return std::nullopt;
    }
    return std::move(opened).value();
}

std::string entry_device(const store::KeyFields& fields) {
    return fields.device_name.empty() ? fields.target_format : fields.device_name;
}

std::string self_path() {
    std::error_code ec;
    auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("kcache") : p.string();
}

std::string human_size(std::uint64_t bytes) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    std::size_t u = 0;
    while (v >= 1024.0 && u + 1 < std::size(units)) {
        v /= 1024.0;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}

std::string format_time(store::TimeMs ms) {
    if (ms <= 0) {
        return "-";
    }
    const std::time_t t = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

const char* origin_name(store::Origin origin) {
    switch (origin) {
        case store::Origin::jit:
            return "jit";
        case store::Origin::aot:
            return "aot";
        case store::Origin::imported:
            return "import";
    }
    return "unknown";
}

const char* verification_name(store::Verification v) {
    switch (v) {
        case store::Verification::unverified:
            return "unverified";
        case store::Verification::passed:
            return "passed";
        case store::Verification::failed:
            return "failed";
    }
    return "unknown";
}

}  // namespace kcache::cli
