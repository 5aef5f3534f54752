#pragma once
// The secret a client presents to http(s) and Redis servers (a bearer token,
// or the Redis password when the URL names none), for a process that runs
// for days while the secret rotates. It comes from one of:
//   - a token file (Settings::token_file): its first line, read again when
//     the file changed (FileStamp: one stat() per request);
//   - a token command (Settings::token_command, run by /bin/sh -c under the
//     watchdog): its first line of output, kept for Settings::token_lifetime
//     and then asked again;
//   - nothing: no token.
// A server that refuses the secret (401, 403, Redis WRONGPASS) makes the
// caller ask refresh(): the file is read again whatever its stamp, the
// command run again, and the request is sent once more only when that gave
// another secret. Thread-safe; one command runs at a time. Internal.

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kcache/common/file_stamp.hpp"
#include "kcache/remote/remote.hpp"

namespace kcache::remote {

class Credential {
  public:
    // Checks the settings (a file and a command are not both set) and reads
    // the token file once (a config error when it is unusable or holds no
    // token). The command does not run before the first request.
    static Result<std::shared_ptr<Credential>, RemoteError> open(const Settings& settings);

    // Whether a secret is configured (a token file or a command).
    bool configured() const { return source_ != Source::none; }

    // The secret to send now: the file's current first line, or the
    // command's output while it is fresh. A file that became unreadable
    // keeps the last secret read (logged once); a command that fails with
    // no earlier output is an error (config, naming the command's exit and
    // its first line of stderr). "" when nothing is configured.
    Result<std::string, RemoteError> current();

    // After a server refused `refused`: reads the file or runs the command
    // again now (a command at most once per kMinRerun). True when the
    // secret is now another one, so that the request is worth sending again.
    bool refresh(const std::string& refused);

    // How often the command ran and the file was read, for tests and the doctor.
    struct Counts {
        std::uint64_t command_runs = 0, file_reads = 0;
    };
    Counts counts() const;

    // Where the secret comes from, for messages ("the token file F", "the
    // token command (KCACHE_REMOTE_TOKEN_COMMAND)"); never the secret.
    std::string origin() const;

  private:
    enum class Source { none, file, command };
    using Clock = std::chrono::steady_clock;
    Credential(const Settings& settings, Source source);

    // Under mu_. Reads the file (its stamp first) or runs the command.
    Status<RemoteError> read_file_locked();
    Status<RemoteError> run_command_locked();

    const Source source_;
    const std::filesystem::path file_;
    const std::string command_;
    const std::chrono::milliseconds lifetime_;

    mutable std::mutex mu_;
    std::string secret_;                 // the last one read; "" before the first
    FileStamp stamp_;                    // of the file as last read
    Clock::time_point fresh_until_{};    // the command's output is kept until then
    Clock::time_point last_run_{};       // when the command last ran
    std::optional<RemoteError> failed_;  // the command's last failure, while no output is kept
    bool warned_unreadable_ = false;
    Counts counts_;
};

}  // namespace kcache::remote
