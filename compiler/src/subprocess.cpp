#include "kcache/compiler/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "kcache/common/unique_fd.hpp"
#include "kcache/compiler/child_process.hpp"

extern char** environ;

namespace kcache::compiler {
namespace {

// Owns posix_spawn attributes and file actions for one spawn.
class SpawnSetup {
  public:
    SpawnSetup() {
        ::posix_spawnattr_init(&attr_);
        ::posix_spawn_file_actions_init(&actions_);
    }
    ~SpawnSetup() {
        ::posix_spawn_file_actions_destroy(&actions_);
        ::posix_spawnattr_destroy(&attr_);
    }
    SpawnSetup(const SpawnSetup&) = delete;
    SpawnSetup& operator=(const SpawnSetup&) = delete;

    // Own process group, default signal dispositions, empty signal mask,
    // stdio from the given fds, everything else closed, optional cwd.
    int prepare(int in, int out, int err, const std::string& cwd) {
        sigset_t none;
        sigset_t all;
        sigemptyset(&none);
        sigfillset(&all);
        int rc = ::posix_spawnattr_setflags(
            &attr_, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        rc = rc ? rc : ::posix_spawnattr_setpgroup(&attr_, 0);
        rc = rc ? rc : ::posix_spawnattr_setsigmask(&attr_, &none);
        rc = rc ? rc : ::posix_spawnattr_setsigdefault(&attr_, &all);
        rc = rc ? rc : ::posix_spawn_file_actions_adddup2(&actions_, in, 0);
        rc = rc ? rc : ::posix_spawn_file_actions_adddup2(&actions_, out, 1);
        rc = rc ? rc : ::posix_spawn_file_actions_adddup2(&actions_, err, 2);
        rc = rc ? rc : ::posix_spawn_file_actions_addclosefrom_np(&actions_, 3);
        if (rc == 0 && !cwd.empty()) {
            rc = ::posix_spawn_file_actions_addchdir_np(&actions_, cwd.c_str());
        }
        return rc;
    }
    const posix_spawnattr_t* attr() const { return &attr_; }
    const posix_spawn_file_actions_t* actions() const { return &actions_; }

  private:
    posix_spawnattr_t attr_;
    posix_spawn_file_actions_t actions_;
};

// environ with `overrides` applied and the parent pid added.
std::vector<std::string> child_environment(const std::vector<std::string>& overrides) {
    std::vector<std::string> env;
    auto overridden = [&](const char* entry) {
        return std::any_of(overrides.begin(), overrides.end(), [&](const std::string& o) {
            const auto eq = o.find('=');
            return std::strncmp(entry, o.c_str(), eq + 1) == 0;
        });
    };
    for (char** e = environ; e && *e; ++e) {
        if (!overridden(*e) && std::strncmp(*e, "KCACHE_PARENT_PID=", 18) != 0) {
            env.emplace_back(*e);
        }
    }
    env.insert(env.end(), overrides.begin(), overrides.end());
    env.push_back(std::string(kParentPidEnv) + "=" + std::to_string(::getpid()));
    return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings) {
        out.push_back(s.data());
    }
    out.push_back(nullptr);
    return out;
}

void set_nonblocking(int fd) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// Starts the child; returns its pid or an errno value (negated).
pid_t spawn_child(const SpawnSpec& spec, Spawned& ends) {
    int in[2];
    int out[2];
    int err[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0) {
        return -errno;
    }
    UniqueFd in_child(in[1]);
    ends.in.reset(in[0]);
    if (::pipe2(out, O_CLOEXEC) != 0) {
        return -errno;
    }
    UniqueFd out_child(out[1]);
    ends.out.reset(out[0]);
    if (::pipe2(err, O_CLOEXEC) != 0) {
        return -errno;
    }
    UniqueFd err_child(err[1]);
    ends.err.reset(err[0]);

    SpawnSetup setup;
    if (int rc =
            setup.prepare(in_child.get(), out_child.get(), err_child.get(), spec.working_dir)) {
        return -rc;
    }
    std::vector<std::string> argv_strings{spec.program};
    argv_strings.insert(argv_strings.end(), spec.args.begin(), spec.args.end());
    std::vector<std::string> env_strings = child_environment(spec.env_overrides);
    auto argv = c_strings(argv_strings);
    auto envp = c_strings(env_strings);
    pid_t pid = -1;
    if (int rc = ::posix_spawn(&pid, spec.program.c_str(), setup.actions(), setup.attr(),
                               argv.data(), envp.data())) {
        return -rc;
    }
    set_nonblocking(ends.in.get());
    set_nonblocking(ends.out.get());
    set_nonblocking(ends.err.get());
    ends.exited.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    return pid;
}

// Reads what is available on `fd` into `sink` (up to `limit` bytes kept).
// Closes `fd` at end of file or on error.
void drain(UniqueFd& fd, std::string& sink, std::size_t limit, bool& truncated) {
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n > 0) {
            const std::size_t keep = std::min<std::size_t>(n, limit - std::min(limit, sink.size()));
            sink.append(buf, keep);
            truncated = truncated || keep < static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        }
        fd.reset();
        return;
    }
}

// Sends the rest of stdin; closes the socket when done or the child left.
void feed(UniqueFd& fd, const std::string& data, std::size_t& sent) {
    while (sent < data.size()) {
        const ssize_t n =
            ::send(fd.get(), data.data() + sent, data.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            sent += static_cast<std::size_t>(n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        } else {
            break;  // EPIPE / ECONNRESET: the child stopped reading
        }
    }
    fd.reset();
}

int poll_timeout_ms(Clock::time_point deadline, bool have_pidfd) {
    const auto left = deadline - Clock::now();
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    // Without a pidfd the child's exit is only noticed by polling.
    const long long cap = have_pidfd ? 1000 : 10;
    return static_cast<int>(std::clamp<long long>(ms, 0, cap));
}

// Feeds stdin and collects stdout/stderr until the child has exited and its
// pipes are closed, or the deadline passes; returns whether it exited.
bool pump(const SpawnSpec& spec, Clock::time_point deadline, Spawned& ends, RunResult& r) {
    const ChildProcess& child = ends.child;
    std::size_t sent = 0;
    bool exited = false;
    while (!exited || ends.out.valid() || ends.err.valid()) {
        if (Clock::now() >= deadline) {
            break;
        }
        const int pidfd = (!exited && ends.exited.valid()) ? ends.exited.get() : -1;
        pollfd fds[4] = {
            {ends.out.valid() ? ends.out.get() : -1, POLLIN, 0},
            {ends.err.valid() ? ends.err.get() : -1, POLLIN, 0},
            {ends.in.valid() ? ends.in.get() : -1, POLLOUT, 0},
            {pidfd, POLLIN, 0},
        };
        if (::poll(fds, 4, poll_timeout_ms(deadline, pidfd >= 0)) < 0 && errno != EINTR) {
            break;
        }
        if (fds[0].revents) {
            const std::size_t before = r.out.size();
            drain(ends.out, r.out, spec.stdout_limit, r.out_truncated);
            if (spec.line_grace.count() > 0 && r.out.find('\n', before) != std::string::npos) {
                deadline = std::max(deadline, Clock::now() + spec.line_grace);
            }
        }
        if (fds[1].revents) {
            drain(ends.err, r.err, spec.stderr_limit, r.err_truncated);
        }
        if (fds[2].revents) {
            feed(ends.in, spec.stdin_data, sent);
        }
        if (!exited && child.has_exited()) {
            exited = true;
            child.kill_group();  // stragglers would hold the pipes open
        }
    }
    return exited;
}

}  // namespace

const char* to_string(ChildExit o) {
    switch (o) {
        case ChildExit::exited:
            return "exited";
        case ChildExit::signaled:
            return "killed by a signal";
        case ChildExit::timed_out:
            return "timed out";
        case ChildExit::spawn_failed:
            return "spawn failed";
    }
    return "?";
}

RunResult run(const SpawnSpec& spec, Clock::time_point deadline) {
    return run(spec, deadline, StartHook());
}

Result<Spawned, int> spawn(const SpawnSpec& spec) {
    Spawned s;
    const pid_t pid = spawn_child(spec, s);
    if (pid < 0) {
        return fail(static_cast<int>(-pid));
    }
    s.child = ChildProcess(pid);
    return s;
}

RunResult run(const SpawnSpec& spec, Clock::time_point deadline, const StartHook& on_start) {
    RunResult r;
    const auto start = Clock::now();
    r.started = start;
    auto spawned = spawn(spec);
    if (!spawned) {
        r.spawn_errno = spawned.error();
        r.elapsed = Clock::now() - start;
        return r;
    }
    r.pid = spawned->child.pid();
    if (on_start) {
        on_start(r.pid);
    }
    if (!pump(spec, deadline, *spawned, r)) {
        // The answer is due now; the teardown of the killed group is not.
        spawned->child.kill_group();
        reap_later(std::move(spawned->child));
        r.elapsed = Clock::now() - start;
        r.outcome = ChildExit::timed_out;
        return r;
    }
    const ExitStatus status = spawned->child.wait();
    r.elapsed = Clock::now() - start;
    if (status.signal) {
        r.outcome = ChildExit::signaled;
        r.signal = *status.signal;
    } else {
        r.outcome = ChildExit::exited;
        r.exit_code = status.exit_code.value_or(-1);
    }
    return r;
}

}  // namespace kcache::compiler
