#include "kcache/compiler/child_process.hpp"

#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <utility>

namespace kcache::compiler {

ChildProcess::ChildProcess(ChildProcess&& o) noexcept : pid_(std::exchange(o.pid_, -1)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
    if (this != &o) {
        kill_and_reap();
        pid_ = std::exchange(o.pid_, -1);
    }
    return *this;
}

ChildProcess::~ChildProcess() {
    kill_and_reap();
}

bool ChildProcess::has_exited() const {
    if (pid_ <= 0) {
        return true;
    }
    siginfo_t info{};
    // WNOWAIT leaves the zombie in place so its pid (and group id) stay ours.
    while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
        if (errno != EINTR) {
            return true;  // ECHILD: nothing left to wait for
        }
    }
    return info.si_pid == pid_;
}

std::optional<ExitStatus> ChildProcess::peek_exit() const {
    if (pid_ <= 0) {
        return std::nullopt;
    }
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
        if (errno != EINTR) {
            return std::nullopt;
        }
    }
    if (info.si_pid != pid_) {
        return std::nullopt;
    }
    ExitStatus status;
    if (info.si_code == CLD_EXITED) {
        status.exit_code = info.si_status;
    } else {
        status.signal = info.si_status;
    }
    return status;
}

void ChildProcess::kill_group() const {
    if (pid_ > 0) {
        ::kill(-pid_, SIGKILL);
    }
}

ExitStatus ChildProcess::wait() {
    if (pid_ <= 0) {
        return {};
    }
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) != 0 &&
           errno == EINTR) {
    }
    // The leader is a zombie now; anything it left in its group goes too.
    kill_group();
    int status = 0;
    pid_t got = -1;
    do {
        got = ::waitpid(pid_, &status, 0);
    } while (got < 0 && errno == EINTR);
    pid_ = -1;
    ExitStatus result;
    if (got < 0) {
        return result;
    }
    if (WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result.signal = WTERMSIG(status);
    }
    return result;
}

void ChildProcess::kill_and_reap() noexcept {
    if (pid_ <= 0) {
        return;
    }
    kill_group();
    (void)wait();
}

}  // namespace kcache::compiler
