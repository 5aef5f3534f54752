#include "process_probe.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace kcache::test {
namespace {

// Fields of /proc/<pid>/stat after the command name: state, ppid, pgrp.
bool read_stat(pid_t pid, char& state, pid_t& pgrp, pid_t* parent = nullptr) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line)) {
        return false;
    }
    const auto close = line.rfind(')');
    if (close == std::string::npos) {
        return false;
    }
    std::istringstream rest(line.substr(close + 2));
    pid_t ppid = 0;
    rest >> state >> ppid >> pgrp;
    if (parent) {
        *parent = ppid;
    }
    return static_cast<bool>(rest);
}

// What /proc/<pid>/stat says of one process.
struct Stat {
    pid_t pid = 0;
    char state = 0;
    pid_t ppid = 0;
    pid_t pgrp = 0;
};

// Pids of the processes for which `keep` holds.
std::vector<pid_t> processes_where(const std::function<bool(const Stat&)>& keep) {
    std::vector<pid_t> found;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        Stat st;
        st.pid = std::stoi(name);
        if (read_stat(st.pid, st.state, st.pgrp, &st.ppid) && keep(st)) {
            found.push_back(st.pid);
        }
    }
    return found;
}

}  // namespace

bool process_gone(pid_t pid) {
    char state = 0;
    pid_t pgrp = 0;
    return !read_stat(pid, state, pgrp) || state == 'Z' || state == 'X';
}

std::vector<pid_t> live_group_members(pid_t pgid) {
    return processes_where(
        [&](const Stat& st) { return st.pgrp == pgid && st.state != 'Z' && st.state != 'X'; });
}

bool wait_gone(pid_t pid, std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!process_gone(pid) && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return process_gone(pid);
}

bool wait_reaped(pid_t pid, std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    const auto path = "/proc/" + std::to_string(pid);
    while (std::filesystem::exists(path) && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return !std::filesystem::exists(path);
}

std::vector<pid_t> live_children_named(const std::string& comm) {
    return processes_where([&](const Stat& st) {
        std::string command;
        std::getline(std::ifstream("/proc/" + std::to_string(st.pid) + "/comm"), command);
        return st.ppid == ::getpid() && st.state != 'Z' && st.state != 'X' && command == comm;
    });
}

std::vector<pid_t> zombie_children() {
    return processes_where([](const Stat& st) { return st.ppid == ::getpid() && st.state == 'Z'; });
}

int open_fd_count() {
    int n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
        ++n;
    }
    return n - 1;  // the iterator's own descriptor
}

ForkedParent fork_parent(const std::function<void(const std::function<void(pid_t)>&)>& body) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        return {};
    }
    ForkedParent result;
    result.parent = ::fork();
    if (result.parent == 0) {
        body([&](pid_t p) { (void)!::write(fds[1], &p, sizeof p); });
        ::_exit(0);
    }
    ::close(fds[1]);
    if (result.parent > 0 &&
        ::read(fds[0], &result.started, sizeof result.started) != sizeof result.started) {
        result.started = -1;
    }
    ::close(fds[0]);
    return result;
}

bool kill_parent(pid_t parent) {
    ::kill(parent, SIGKILL);
    return ::waitpid(parent, nullptr, 0) == parent;
}

}  // namespace kcache::test
