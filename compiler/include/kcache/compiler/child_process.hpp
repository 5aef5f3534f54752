#pragma once
// ChildProcess: owns one spawned child that leads its own process group.
// Move-only; the destructor SIGKILLs the whole group and reaps the child if
// that has not happened yet, so no code path leaves a zombie or a stray helper.

#include <sys/types.h>

#include <optional>

namespace kcache::compiler {

// How a reaped child ended: exactly one of exit code or signal is set.
struct ExitStatus {
    std::optional<int> exit_code;
    std::optional<int> signal;
};

class ChildProcess {
  public:
    ChildProcess() = default;
    // Takes ownership of `pid`, which must lead its own process group.
    explicit ChildProcess(pid_t pid) : pid_(pid) {}
    ChildProcess(ChildProcess&& o) noexcept;
    ChildProcess& operator=(ChildProcess&& o) noexcept;
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    ~ChildProcess();

    // The child's pid (== its process group id); -1 when empty or reaped.
    pid_t pid() const { return pid_; }
    bool running() const { return pid_ > 0; }

    // Returns true once the child has exited (it stays unreaped, a zombie
    // that pins its pid and group id, until wait()). Never blocks.
    bool has_exited() const;

    // How the child ended once it has exited, without reaping it (so its pid
    // and group id stay ours until wait()); nullopt while it runs.
    std::optional<ExitStatus> peek_exit() const;

    // Sends SIGKILL to the child's whole process group. Safe while the child
    // is a zombie (its pid cannot be reused before it is reaped).
    void kill_group() const;

    // Blocks until the child exits, kills what is left of its group, reaps
    // the child and returns how it ended. Empty object: returns {}.
    ExitStatus wait();

  private:
    void kill_and_reap() noexcept;

    pid_t pid_ = -1;
};

}  // namespace kcache::compiler
