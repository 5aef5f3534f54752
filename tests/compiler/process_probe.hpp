#pragma once
// Test-side views of processes through /proc: is a pid gone, which
// processes are in a group, how many fds this process holds.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace kcache::test {

// True when `pid` no longer runs (absent from /proc, or a zombie of
// someone else's that only waits to be reaped).
bool process_gone(pid_t pid);

// Pids of live (non-zombie) processes whose process group is `pgid`.
std::vector<pid_t> live_group_members(pid_t pgid);

// Waits up to `limit` for process_gone(pid); returns its final answer.
bool wait_gone(pid_t pid, std::chrono::milliseconds limit);

// Waits up to `limit` until `pid` has no /proc entry at all (exited and
// reaped, not even a zombie); returns whether it got there.
bool wait_reaped(pid_t pid, std::chrono::milliseconds limit);

// Pids of this process's live (non-zombie) children whose command name is `comm`.
std::vector<pid_t> live_children_named(const std::string& comm);

// Pids of this process's children that are zombies (exited, not reaped).
std::vector<pid_t> zombie_children();

// Number of open file descriptors of this process.
int open_fd_count();

// A forked "parent" process and the process it started.
struct ForkedParent {
    pid_t parent = -1;
    pid_t started = -1;
};

// Forks a child that runs `body(report)` and then _exits; `body` calls
// `report(pid)` once it started a process. Returns both pids once reported
// (started == -1 when the child never reported).
ForkedParent fork_parent(const std::function<void(const std::function<void(pid_t)>&)>& body);

// SIGKILLs `parent` and reaps it; returns whether it was reaped.
bool kill_parent(pid_t parent);

}  // namespace kcache::test
