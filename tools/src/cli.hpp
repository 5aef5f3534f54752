#pragma once
// What every subcommand shares: exit codes, the command table entry, error
// reporting, and opening the user store the way the runtime does.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "kcache/kcache.hpp"
#include "kcache/store/store.hpp"

namespace kcache::cli {

// The process exit codes (README "kcache exit codes"); stable for scripts.
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
Command explain_command();
Command gc_command();
Command export_command();
Command import_command();
Command doctor_command();

// Prints "kcache `command`: `message`" to stderr and returns `code` as an int.
int report(Exit code, std::string_view command, std::string_view message);

// The exit code for a store error (usage for InvalidArgument, else store_error).
Exit exit_for(const store::StoreError& error);

// The effective configuration (kcache::load_config: KCACHE_* variables, then
// the config file, then defaults), or prints why not (prefixed by `command`)
// and sets `exit_code` (usage: a malformed value).
std::optional<Config> load_cli_config(std::string_view command, int& exit_code);

// Opens the configured user store (read-only when `mode` or the configuration
// says so), or prints why not (prefixed by `command`) and sets `exit_code`.
std::optional<store::Store> open_user_store(std::string_view command, int& exit_code,
                                            store::OpenMode mode = store::OpenMode::read_write);

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
