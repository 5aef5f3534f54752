#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

extern char** environ;

namespace kcache::test {
namespace {

int env_int(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? std::atoi(v) : -1;
}

void close_fd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

// Everything execve needs, built before fork (nothing may allocate after it).
struct ExecImage {
    std::vector<std::string> strings;
    std::vector<char*> argv;
    std::vector<char*> envp;
};

ExecImage make_image(const std::string& filter, const std::string& role, int index, int gate_fd,
                     int report_fd, const std::map<std::string, std::string>& env) {
    ExecImage img;
    std::vector<std::string> args = {"/proc/self/exe", "--gtest_filter=" + filter,
                                     "--gtest_brief=1"};
    std::vector<std::string> vars;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string kv = *e;
        if (kv.rfind("KCACHE_TEST_CHILD_", 0) != 0 && kv.rfind("GTEST_", 0) != 0) {
            vars.push_back(kv);
        }
    }
    vars.push_back(std::string(kChildRoleEnv) + "=" + role);
    vars.push_back(std::string(kChildIndexEnv) + "=" + std::to_string(index));
    vars.push_back(std::string(kChildGateFdEnv) + "=" + std::to_string(gate_fd));
    vars.push_back(std::string(kChildReportFdEnv) + "=" + std::to_string(report_fd));
    for (const auto& [k, v] : env) {
        vars.push_back("KCACHE_TEST_CHILD_ENV_" + k + "=" + v);
    }
    img.strings = args;
    img.strings.insert(img.strings.end(), vars.begin(), vars.end());
    for (std::size_t i = 0; i < img.strings.size(); ++i) {
        (i < args.size() ? img.argv : img.envp).push_back(img.strings[i].data());
    }
    img.argv.push_back(nullptr);
    img.envp.push_back(nullptr);
    return img;
}

}  // namespace

std::string child_role() {
    const char* v = std::getenv(kChildRoleEnv);
    return v ? v : "";
}

int child_index() {
    return env_int(kChildIndexEnv);
}

std::string in_forked_child(const std::function<int()>& body, std::chrono::milliseconds limit) {
    std::fflush(nullptr);  // nothing buffered is written twice
    const pid_t pid = ::fork();
    if (pid < 0) {
        return std::string("fork: ") + std::strerror(errno);
    }
    if (pid == 0) {
        int code = 100;
        try {
            code = body();
        } catch (...) {
            code = 101;
        }
        std::fflush(nullptr);
        ::_exit(code);
    }
    const auto until = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > until) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            return "hung";
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                             : "signal " + std::to_string(WTERMSIG(status));
}

std::string child_env(const std::string& name) {
    const char* v = std::getenv(("KCACHE_TEST_CHILD_ENV_" + name).c_str());
    return v ? v : "";
}

bool wait_for_start_gate() {
    int fd = env_int(kChildGateFdEnv);
    if (fd < 0) {
        return false;
    }
    char byte = 0;
    ssize_t n;
    do {
        n = ::read(fd, &byte, 1);
    } while (n < 0 && errno == EINTR);
    ::close(fd);
    // The parent writes one byte per child to release; EOF means it died first.
    return n == 1;
}

void report_line(const std::string& line) {
    int fd = env_int(kChildReportFdEnv);
    if (fd < 0) {
        return;
    }
    std::string msg = line + "\n";
    const char* p = msg.data();
    std::size_t left = msg.size();
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
}

std::string current_test_filter() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return std::string(info->test_suite_name()) + "." + info->name();
}

std::string ChildResult::describe() const {
    std::string s = "child " + std::to_string(pid);
    if (exited) {
        return s + " exited with " + std::to_string(exit_code);
    }
    return s + " killed by signal " + std::to_string(signal);
}

ChildGroup ChildGroup::spawn(int n, const std::string& role,
                             const std::map<std::string, std::string>& env,
                             const std::string& filter) {
    ChildGroup g;
    int gate[2];
    if (::pipe2(gate, O_CLOEXEC) != 0) {
        throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
    }
    g.gate_write_fd_ = gate[1];
    for (int i = 0; i < n; ++i) {
        int report[2];
        if (::pipe2(report, O_CLOEXEC) != 0) {
            throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
        }
        ExecImage img = make_image(filter, role, i, gate[0], report[1], env);
        pid_t pid = ::fork();
        if (pid < 0) {
            throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
        }
        if (pid == 0) {
            // Only async-signal-safe calls until execve: keep the two child ends open.
            ::fcntl(gate[0], F_SETFD, 0);
            ::fcntl(report[1], F_SETFD, 0);
            ::execve(img.argv[0], img.argv.data(), img.envp.data());
            ::_exit(127);
        }
        ::close(report[1]);
        ::fcntl(report[0], F_SETFL, O_NONBLOCK);
        Child c;
        c.pid = pid;
        c.report_fd = report[0];
        c.result.pid = pid;
        g.children_.push_back(std::move(c));
    }
    ::close(gate[0]);
    return g;
}

ChildGroup::ChildGroup(ChildGroup&& o) noexcept
    : children_(std::move(o.children_)), gate_write_fd_(std::exchange(o.gate_write_fd_, -1)) {
    o.children_.clear();
}

ChildGroup::~ChildGroup() {
    close_fd(gate_write_fd_);
    for (auto& c : children_) {
        if (!c.reaped) {
            ::kill(c.pid, SIGKILL);
            ::waitpid(c.pid, nullptr, 0);
        }
        close_fd(c.report_fd);
    }
}

void ChildGroup::release() {
    if (gate_write_fd_ < 0) {
        return;
    }
    std::string bytes(children_.size(), 'g');
    (void)!::write(gate_write_fd_, bytes.data(), bytes.size());
    close_fd(gate_write_fd_);
}

void ChildGroup::kill_all(int sig) {
    for (auto& c : children_) {
        if (!c.reaped) {
            ::kill(c.pid, sig);
        }
    }
}

void ChildGroup::drain(Child& c, bool until_eof) {
    char buf[4096];
    while (c.report_fd >= 0) {
        ssize_t n = ::read(c.report_fd, buf, sizeof buf);
        if (n > 0) {
            c.partial.append(buf, static_cast<std::size_t>(n));
            std::size_t nl;
            while ((nl = c.partial.find('\n')) != std::string::npos) {
                c.result.lines.push_back(c.partial.substr(0, nl));
                c.partial.erase(0, nl + 1);
            }
            continue;
        }
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
            close_fd(c.report_fd);  // EOF: a partial last line is dropped (it was cut by a kill)
        }
        if (!until_eof || n < 0) {
            return;
        }
    }
}

std::vector<ChildResult> ChildGroup::wait_all(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    release();  // a gate never opened would hold the children forever
    std::size_t alive = children_.size();
    while (alive > 0) {
        alive = 0;
        for (auto& c : children_) {
            drain(c, false);
            if (c.reaped) {
                continue;
            }
            int status = 0;
            pid_t r = ::waitpid(c.pid, &status, WNOHANG);
            if (r == c.pid) {
                c.reaped = true;
                c.result.exited = WIFEXITED(status);
                c.result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
                c.result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
            } else {
                ++alive;
            }
        }
        if (alive > 0 && std::chrono::steady_clock::now() >= deadline) {
            kill_all(SIGKILL);
        }
        if (alive > 0) {
            std::vector<pollfd> fds;
            for (auto& c : children_) {
                if (c.report_fd >= 0) {
                    fds.push_back({c.report_fd, POLLIN, 0});
                }
            }
            ::poll(fds.data(), fds.size(), 5);
        }
    }
    std::vector<ChildResult> out;
    for (auto& c : children_) {
        drain(c, true);
        out.push_back(c.result);
    }
    return out;
}

}  // namespace kcache::test
