#pragma once
// The circuit breaker, shared by the node's processes through a small file in
// the user store's directory:
//
//   <state_dir>/remote-down        "<until_ms> <reason>\n", replaced by rename
//   <state_dir>/remote-down.lock   flock'ed by the one process trying again
//
// No file: requests go out. A mark whose time has not passed: every process
// skips the server without a request. A mark that has expired: the one
// process that takes the lock sends a trial request; the others keep
// skipping; its success removes the mark, its failure renews it.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>

#include "kcache/common/unique_fd.hpp"

namespace kcache::remote {

class Breaker {
  public:
    // A permission to send one request; holds the trial lock when it is the trial.
    struct Ticket {
        bool allowed = false;
        std::string why_not;  // when !allowed
        UniqueFd trial_lock;
    };

    // An empty `state_dir` keeps the mark in this process only.
    Breaker(std::filesystem::path state_dir, std::chrono::milliseconds window);

    // Whether a request may go out now.
    Ticket allow();
    // The request failed in a way that says the server is down: mark it for the window.
    void failed(Ticket& ticket, const std::string& why);
    // The server answered: clear a mark this ticket was the trial for.
    void succeeded(Ticket& ticket);

  private:
    std::filesystem::path mark_;
    std::filesystem::path lock_;
    std::chrono::milliseconds window_;
    std::atomic<std::int64_t> local_until_ms_{0};  // used when there is no state_dir
};

// Milliseconds since the Unix epoch (the mark is shared across processes).
std::int64_t wall_ms();

}  // namespace kcache::remote
