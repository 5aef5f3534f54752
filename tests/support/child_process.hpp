#pragma once
// Multi-process tests: re-execute the current test binary (/proc/self/exe)
// as N children running one test (--gtest_filter) in a "child role" marked
// by an environment variable. Children wait behind a start gate (a pipe the
// parent closes) so they all begin together, and may report lines back to
// the parent through a per-child pipe.
//
//   TEST_F(Suite, Name) {
//       if (kcache::test::child_role() == "writer") { /* child body */ return; }
//       auto group = kcache::test::ChildGroup::spawn(8, "writer", {{"DIR", dir()}});
//       group.release();
//       auto results = group.wait_all(std::chrono::seconds(60));
//   }

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kcache::test {

// Environment variables set in each child.
inline constexpr const char* kChildRoleEnv = "KCACHE_TEST_CHILD_ROLE";
inline constexpr const char* kChildIndexEnv = "KCACHE_TEST_CHILD_INDEX";
inline constexpr const char* kChildGateFdEnv = "KCACHE_TEST_CHILD_GATE_FD";
inline constexpr const char* kChildReportFdEnv = "KCACHE_TEST_CHILD_REPORT_FD";

// Returns this process's child role, or "" in the parent.
std::string child_role();
// Returns this child's index (0..N-1), or -1 in the parent.
int child_index();
// In a child: blocks until the parent releases the gate (or dies); returns
// true when released, false when the parent vanished without releasing.
bool wait_for_start_gate();
// In a child: sends one line (no newline inside) to the parent; unbuffered,
// so a line written before the child is killed still arrives.
void report_line(const std::string& line);
// In a child: value of the extra environment variable `name` ("" if unset).
std::string child_env(const std::string& name);
// Returns "Suite.Name" of the running test (a --gtest_filter for itself).
std::string current_test_filter();

// Runs `body` in a child of fork() (this very process, other threads' state
// as it is at that instant: what an application's forked worker inherits)
// that ends with _exit(body()). Waits at most `limit` for it, then kills it;
// returns "exit N", "signal N" or "hung".
std::string in_forked_child(const std::function<int()>& body, std::chrono::milliseconds limit);

// How a child ended.
struct ChildResult {
    pid_t pid = -1;
    bool exited = false;             // exit() rather than a signal
    int exit_code = -1;              // when exited
    int signal = 0;                  // when killed
    std::vector<std::string> lines;  // what it reported
    bool ok() const { return exited && exit_code == 0; }
    std::string describe() const;
};

// N children running one test in one role; killed (SIGKILL) and reaped on
// destruction if still alive. Move-only.
class ChildGroup {
  public:
    // Starts `n` children running `filter` (default: the current test) with
    // the role `role` and the extra environment `env`; they wait at the gate.
    static ChildGroup spawn(int n, const std::string& role,
                            const std::map<std::string, std::string>& env = {},
                            const std::string& filter = current_test_filter());
    ChildGroup(ChildGroup&&) noexcept;
    ChildGroup& operator=(ChildGroup&&) = delete;
    ChildGroup(const ChildGroup&) = delete;
    ChildGroup& operator=(const ChildGroup&) = delete;
    ~ChildGroup();

    // Opens the gate: every child starts now.
    void release();
    // Sends `sig` to every child still running.
    void kill_all(int sig);
    // Waits for every child (collecting reports) until `timeout` passes, then
    // kills the rest with SIGKILL; returns each child's result in index order.
    std::vector<ChildResult> wait_all(std::chrono::milliseconds timeout);
    std::size_t size() const { return children_.size(); }

  private:
    struct Child {
        pid_t pid = -1;
        int report_fd = -1;  // read end
        std::string partial;
        ChildResult result;
        bool reaped = false;
    };
    ChildGroup() = default;
    void drain(Child& c, bool until_eof);
    std::vector<Child> children_;
    int gate_write_fd_ = -1;
};

}  // namespace kcache::test
