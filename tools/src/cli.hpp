#pragma once
// What every subcommand shares: exit codes, the command table entry, error
// reporting, and opening the user store the way the runtime does.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "kcache/common/deadline.hpp"
#include "kcache/compiler/ocloc.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/service/service_api.hpp"
#include "kcache/store/pack.hpp"
#include "kcache/store/store.hpp"

namespace kcache::cli {

// The process exit codes (tools/README.md, "Exit codes"); stable for scripts.
enum class Exit : int {
    ok = 0,             // done; nothing needs attention
    action_needed = 1,  // done, but something failed that the user must act on
    usage = 2,          // bad command line: unknown option, missing or bad value, conflict
    not_found = 3,      // the named device, kernel, entry or file does not exist
    store_error = 4,    // the store or a pack cannot be used (unwritable, malformed, newer schema)
    environment = 5,    // OpenCL or ocloc unusable (no devices, probe hung, tool missing)
};

// Exit-code lines for --help, one per code.
inline constexpr const char* kExitOk = "  0  success\n";
inline constexpr const char* kExitUsage =
    "  2  usage error (unknown option, bad value, conflict)\n";
inline constexpr const char* kExitNotFound =
    "  3  the named device, kernel, entry or file does not exist\n";
inline constexpr const char* kExitStore =
    "  4  store or pack unusable (unwritable directory, malformed pack, newer schema)\n";
inline constexpr const char* kExitEnvironment =
    "  5  OpenCL or ocloc unusable (no device, probe timed out, tool missing)\n";

// One subcommand: its spec (help and parser) and its body.
struct Command {
    CommandSpec spec;
    int (*run)(const ParsedArgs& args);
};

Command devices_command();
Command warm_command();
Command prebuild_command();
Command get_command();
Command ls_command();
Command stats_command();
Command verify_command();
Command canary_command();
Command errata_command();
Command explain_command();
Command gc_command();
Command export_command();
Command import_command();
Command doctor_command();
Command keygen_command();
Command sign_command();
Command capture_command();
// Every subcommand, in the order `kcache --help` lists them.
std::vector<Command> all_commands();

// Prints "kcache `command`: `message`" to stderr and returns `code` as an int.
int report(Exit code, std::string_view command, std::string_view message);

// The exit code for a store error (usage for InvalidArgument, else store_error).
Exit exit_for(const store::StoreError& error);

// The effective configuration (kcache::load_config: KCACHE_* variables, then
// the config file, then defaults), or prints why not (prefixed by `command`)
// and sets `exit_code` (usage: a malformed value).
std::optional<Config> load_cli_config(std::string_view command, int& exit_code);

// The device database with `config.device_db` (KCACHE_DEVICE_DB) layered on
// top, or prints why not (naming the file, prefixed by `command`) and sets
// `exit_code`: not_found when the override cannot be read, usage when it is
// malformed.
std::optional<device_db::DeviceDb> load_device_db(std::string_view command, const Config& config,
                                                  int& exit_code);

// ocloc as `config` says to run it: under the configured kcache-jit as its
// exec guard (jit_path), with its scratch directories under `config.tmpdir`.
compiler::OclocConfig ocloc_config(const Config& config);

// Opens the configured user store (read-only when `mode` or the configuration
// says so), or prints why not (prefixed by `command`) and sets `exit_code`.
std::optional<store::Store> open_user_store(std::string_view command, int& exit_code,
                                            store::OpenMode mode = store::OpenMode::read_write);

// Why a path named on the command line cannot be used: the exit code and a
// message naming the path.
struct PathProblem {
    Exit code;
    std::string message;
};

// Checks, before any work, that a new file can be published at `out` the way
// the store writes packs (a temporary sibling renamed into place): it must not
// exist, its directory must exist and accept the temporary name. Never throws.
std::optional<PathProblem> new_output_problem(const std::filesystem::path& out);

// Checks that `path` names an existing regular file (a pack to read); not_found
// when it is missing or unreachable (e.g. a name too long), store_error when
// it is not a regular file. Never throws.
std::optional<PathProblem> input_file_problem(const std::filesystem::path& path);

// The pack a command was given by name (`--pack FILE`, `import PACK`), opened;
// or prints why not (input_file_problem's codes; store_error when it does
// not open as a pack), prefixed by `command`, and sets `exit_code`.
std::optional<store::Pack> open_named_pack(std::string_view command,
                                           const std::filesystem::path& path, int& exit_code);

// The most worker threads a command starts (--jobs is bounded by it).
inline constexpr std::uint64_t kMaxJobs = 256;

// Runs `work` on up to `threads` threads, the calling one included, and
// returns when every one has returned. When the system refuses more threads
// the ones started (at least the caller) do the work: `work` must take its
// items from a shared queue, so that any number of threads finishes them.
void run_parallel(std::size_t threads, const std::function<void()>& work);

// A compiler log cut for a terminal: at most `max_lines` lines of at most 240
// bytes each, blank lines dropped, and a last line saying how much was left out.
std::string trim_log(std::string_view log, std::size_t max_lines = 20);

// Absolute path of this executable (/proc/self/exe).
std::string self_path();

// Formats a byte count for people ("1.4 MiB").
std::string human_size(std::uint64_t bytes);

// Formats a millisecond Unix time as UTC "2026-11-22 04:05:06" ("-" for 0).
std::string format_time(store::TimeMs ms);

// What identifies an entry's device: its name, or for AOT entries the target
// format ("aot:tgllp").
std::string entry_device(const store::KeyFields& fields);

// Stable lower-case names for stored enums.
const char* origin_name(store::Origin origin);
const char* verification_name(store::Verification v);

}  // namespace kcache::cli
