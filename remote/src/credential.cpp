#include "credential.hpp"

#include "kcache/common/log.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/compiler/subprocess.hpp"

namespace kcache::remote {
namespace {

// The longest token file read, and the most output of a command kept: a
// token is a line, not a document.
constexpr std::size_t kMaxTokenBytes = 64 * 1024;
// How long a token command may run before the watchdog kills it.
constexpr std::chrono::seconds kCommandLimit{10};
// A command runs again after a refusal or a failure no sooner than this.
constexpr std::chrono::seconds kMinRerun{1};

Unexpected<RemoteError> config(std::string message) {
    return fail(RemoteError{RemoteErrc::config, std::move(message)});
}

// The first line of `text` without surrounding blanks; nullopt when that
// is empty or holds a carriage return (no header may carry one).
std::optional<std::string> first_line(const std::string& text) {
    std::string line = text.substr(0, text.find('\n'));
    const auto b = line.find_first_not_of(" \t\r");
    const auto e = line.find_last_not_of(" \t\r");
    line = b == std::string::npos ? "" : line.substr(b, e - b + 1);
    if (line.empty() || line.find('\r') != std::string::npos) {
        return std::nullopt;
    }
    return line;
}

// What a failed command says of itself: its exit and first line of stderr.
std::string command_failure(const compiler::RunResult& r) {
    std::string why;
    switch (r.outcome) {
        case compiler::ChildExit::exited:
            why = r.exit_code == 0 ? "printed no token" : "exited " + std::to_string(r.exit_code);
            break;
        case compiler::ChildExit::signaled:
            why = "was killed by signal " + std::to_string(r.signal);
            break;
        case compiler::ChildExit::timed_out:
            why = "ran past " + std::to_string(kCommandLimit.count()) + " s and was killed";
            break;
        case compiler::ChildExit::spawn_failed:
            why = "could not start /bin/sh (errno " + std::to_string(r.spawn_errno) + ")";
            break;
    }
    const std::string err = r.err.substr(0, r.err.find('\n'));
    return err.empty() ? why : why + ": " + err.substr(0, 200);
}

}  // namespace

Credential::Credential(const Settings& s, Source source)
    : source_(source),
      file_(s.token_file),
      command_(s.token_command),
      lifetime_(s.token_lifetime) {}

Result<std::shared_ptr<Credential>, RemoteError> Credential::open(const Settings& settings) {
    if (!settings.token_file.empty() && !settings.token_command.empty()) {
        return config(
            "set KCACHE_REMOTE_TOKEN_FILE or KCACHE_REMOTE_TOKEN_COMMAND, not both: the token "
            "must come from one place");
    }
    if (!settings.token_command.empty() && settings.token_lifetime.count() <= 0) {
        return config("KCACHE_REMOTE_TOKEN_LIFETIME must be positive");
    }
    const Source source = !settings.token_file.empty()      ? Source::file
                          : !settings.token_command.empty() ? Source::command
                                                            : Source::none;
    std::shared_ptr<Credential> c(new Credential(settings, source));
    if (source == Source::file) {
        std::lock_guard g(c->mu_);
        if (auto read = c->read_file_locked(); !read) {
            return fail(read.error());
        }
    }
    return c;
}

Status<RemoteError> Credential::read_file_locked() {
    // The stamp before the read: a change made while reading shows next time.
    const FileStamp stamp = stamp_of(file_);
    ++counts_.file_reads;
    auto text = read_regular_file(file_, kMaxTokenBytes);
    if (!text) {
        return config("cannot read the token file: " + text.error().message);
    }
    auto token = first_line(*text);
    if (!token) {
        return config("the token file " + file_.string() + " holds no token");
    }
    secret_ = std::move(*token);
    stamp_ = stamp;
    warned_unreadable_ = false;
    return Ok{};
}

Status<RemoteError> Credential::run_command_locked() {
    compiler::SpawnSpec spec;
    spec.program = "/bin/sh";
    spec.args = {"-c", command_};
    spec.stdout_limit = kMaxTokenBytes;
    spec.stderr_limit = 4096;
    last_run_ = Clock::now();
    ++counts_.command_runs;
    const compiler::RunResult r = compiler::run(spec, last_run_ + kCommandLimit);
    const auto token = r.outcome == compiler::ChildExit::exited && r.exit_code == 0
                           ? first_line(r.out)
                           : std::nullopt;
    if (!token) {
        return config("the token command (KCACHE_REMOTE_TOKEN_COMMAND) " + command_failure(r));
    }
    secret_ = *token;
    fresh_until_ = Clock::now() + lifetime_;
    failed_.reset();
    return Ok{};
}

Result<std::string, RemoteError> Credential::current() {
    std::lock_guard g(mu_);
    if (source_ == Source::file && stamp_of(file_) != stamp_) {
        if (auto read = read_file_locked(); !read && !warned_unreadable_) {
            warned_unreadable_ = true;
            logging::warning(read.error().message + "; the token read before is still sent");
        }
    } else if (source_ == Source::command && Clock::now() >= fresh_until_) {
        const bool may_run = !failed_ || Clock::now() - last_run_ >= kMinRerun;
        if (may_run) {
            if (auto ran = run_command_locked(); !ran) {
                failed_ = ran.error();
                if (!secret_.empty()) {
                    logging::warning(ran.error().message + "; the token it gave before is sent");
                }
            }
        }
        if (failed_ && secret_.empty()) {
            return fail(*failed_);
        }
    }
    return secret_;
}

bool Credential::refresh(const std::string& refused) {
    std::lock_guard g(mu_);
    if (source_ == Source::file) {
        (void)read_file_locked();
    } else if (source_ == Source::command && Clock::now() - last_run_ >= kMinRerun) {
        if (auto ran = run_command_locked(); !ran) {
            failed_ = ran.error();
            logging::warning(ran.error().message);
        }
    }
    return !secret_.empty() && secret_ != refused;
}

Credential::Counts Credential::counts() const {
    std::lock_guard g(mu_);
    return counts_;
}

std::string Credential::origin() const {
    switch (source_) {
        case Source::file:
            return "the token file " + file_.string() + " (KCACHE_REMOTE_TOKEN_FILE)";
        case Source::command:
            return "the token command (KCACHE_REMOTE_TOKEN_COMMAND), kept " +
                   std::to_string(lifetime_.count() / 1000) + " s";
        case Source::none:
            break;
    }
    return "no token";
}

}  // namespace kcache::remote
