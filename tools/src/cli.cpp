#include "cli.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <system_error>
#include <thread>

#include "kcache/config/text.hpp"
#include "kcache/service/parts.hpp"
#include "remote_cli.hpp"
#include "run_layer.hpp"

namespace kcache::cli {

std::vector<Command> all_commands() {
    return {devices_command(), warm_command(),   prebuild_command(), get_command(),
            ls_command(),      stats_command(),  verify_command(),   explain_command(),
            gc_command(),      export_command(), import_command(),   doctor_command(),
            push_command(),    pull_command(),   remote_command(),   keygen_command(),
            sign_command(),    run_command(),    capture_command(),  canary_command(),
            errata_command()};
}

int report(Exit code, std::string_view command, std::string_view message) {
    std::cerr << "kcache " << command << ": " << service::printable(message) << "\n";
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

std::optional<device_db::DeviceDb> load_device_db(std::string_view command, const Config& config,
                                                  int& exit_code) {
    auto db = device_db::DeviceDb::with_override(config.device_db);
    if (!db) {
        const bool unreadable = db.error().code == device_db::DeviceDbErrc::io;
        const auto origin = config.origins.find("device_db");
        const bool in_file =
            origin != config.origins.end() && origin->second.second == Source::config_file;
        exit_code =
            report(unreadable ? Exit::not_found : Exit::usage, command,
                   std::string(in_file ? "device_db in the config file" : "KCACHE_DEVICE_DB") +
                       ": " + db.error().message);
        return std::nullopt;
    }
    return std::move(db).value();
}

compiler::OclocConfig ocloc_config(const Config& config) {
    compiler::OclocConfig c;
    c.guard_path = config.jit_helper;  // empty: compiler::default_helper_path()
    c.scratch_root = config.tmpdir.string();
    return c;
}

std::optional<store::Store> open_user_store(std::string_view command, int& exit_code,
                                            store::OpenMode mode) {
    auto config = load_cli_config(command, exit_code);
    if (!config) {
        return std::nullopt;
    }
    // The composition root's mapping, the same as Cache::open's: size and
    // hot-copy bounds, read-only, the migration of an older schema.
    auto opened = service::open_user_store(*config,
                                           mode == store::OpenMode::read_only
                                               ? service::StoreAccess::read_only
                                               : service::StoreAccess::read_write,
                                           service::OpenTiming::at_once);
    if (!opened) {
        exit_code = report(exit_for(opened.error()), command, opened.error().message);
        return std::nullopt;
    }
    return std::move(opened).value();
}

std::optional<PathProblem> new_output_problem(const std::filesystem::path& out) {
    if (out.empty() || !out.has_filename()) {
        return PathProblem{Exit::usage, "the output file name is empty ('" + out.string() +
                                            "'): name the file to write"};
    }
    struct stat st {};
    if (::lstat(out.c_str(), &st) == 0) {
        return PathProblem{Exit::usage, out.string() + " already exists; remove it first"};
    }
    if (errno != ENOENT) {
        return PathProblem{Exit::usage, out.string() + ": " + std::strerror(errno)};
    }
    const std::filesystem::path parent = out.has_parent_path() ? out.parent_path() : ".";
    if (::stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return PathProblem{Exit::not_found,
                           out.string() + ": no such directory " + parent.string()};
    }
    // The store writes "<out>.tmp-<pid>" and renames it: try exactly that name.
    const std::string probe = out.string() + ".tmp-" + std::to_string(::getpid());
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        const int err = errno;
        return PathProblem{err == ENAMETOOLONG ? Exit::usage : Exit::store_error,
                           "cannot write " + out.string() + ": " + std::strerror(err)};
    }
    ::close(fd);
    ::unlink(probe.c_str());
    return std::nullopt;
}

std::optional<PathProblem> input_file_problem(const std::filesystem::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        const int err = errno;
        return PathProblem{Exit::not_found, err == ENOENT
                                                ? "no such file: " + path.string()
                                                : path.string() + ": " + std::strerror(err)};
    }
    if (!S_ISREG(st.st_mode)) {
        return PathProblem{Exit::store_error, path.string() + ": not a regular file"};
    }
    return std::nullopt;
}

std::optional<store::Pack> open_named_pack(std::string_view command,
                                           const std::filesystem::path& path, int& exit_code) {
    if (auto problem = input_file_problem(path)) {
        exit_code = report(problem->code, command, problem->message);
        return std::nullopt;
    }
    auto opened = store::Pack::open(path);
    if (!opened) {
        exit_code = report(Exit::store_error, command, opened.error().message);
        return std::nullopt;
    }
    return std::move(opened).value();
}

void run_parallel(std::size_t threads, const std::function<void()>& work) {
    std::vector<std::jthread> started;
    for (std::size_t t = 1; t < threads; ++t) {
        try {
            started.emplace_back(work);
        } catch (const std::system_error&) {
            break;  // e.g. EAGAIN at the process's thread limit: fewer threads, same work
        }
    }
    work();
}

std::string trim_log(std::string_view log, std::size_t max_lines) {
    constexpr std::size_t kMaxLine = 240;
    std::string out;
    std::size_t shown = 0;
    std::size_t left_out = 0;
    for (std::size_t start = 0; start < log.size();) {
        std::size_t end = log.find('\n', start);
        end = end == std::string_view::npos ? log.size() : end;
        std::string_view line = log.substr(start, end - start);
        start = end + 1;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
            continue;
        }
        if (shown == max_lines) {
            ++left_out;
            continue;
        }
        out.append(line.substr(0, kMaxLine));
        out += line.size() > kMaxLine ? "…\n" : "\n";
        ++shown;
    }
    if (left_out > 0) {
        out +=
            "… " + std::to_string(left_out) + " more lines (kcache explain shows the whole log)\n";
    }
    return out;
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
