#pragma once
// The circuit breaker of one server, shared by the node's processes through
// small files in the user store's directory; a client keeps one per server
// (Breakers: each HTTP or S3 endpoint, each Redis server or cluster node),
// so a server that fails is skipped while the others are still asked:
//
//   <state_dir>/remote-down.<tag>  "<until_ms> <reason>\n", replaced by rename
//   <state_dir>/remote-up.<tag>    "<until_ms>\n": the server answered within
//                                  the window before until_ms, replaced by rename
//   <state_dir>/remote-lock.<tag>  flock'ed by the one process trying the server
//   tag := the server's name ("redis://127.0.0.1:7001") with every byte but
//          [A-Za-z0-9.-] made '_'; a longer one than 100 bytes is cut there and
//          ends in '~' and 16 hex digits of its FNV-1a hash
//
// A down mark whose time has not passed: every process skips the server
// without a request. A down mark that has expired: the one process that
// takes the lock sends a trial request; the others keep skipping; its
// success removes the mark, its failure renews it.
// No down mark and a fresh up mark: requests go out at once. No mark at all
// (a node starting, or the server quiet for a window): the server is
// unconfirmed, and only the process holding the lock sends a request; the
// others wait for its answer (at most one request timeout) and then follow
// the mark it left. So processes that start together against a hanging
// server pay one timeout between them, not one each.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "kcache/common/unique_fd.hpp"

namespace kcache::remote {

// The most read of one of the node's small state files (the marks above,
// remote-stats): each holds a line or a few; anything longer is not ours.
inline constexpr std::size_t kMaxStateFileBytes = 4096;

class Breaker {
  public:
    // A permission to send one request; holds the trial lock when it is the trial.
    struct Ticket {
        bool allowed = false;
        std::string why_not;  // when !allowed
        UniqueFd trial_lock;
    };

    // The breaker of `server` (its files named by breaker_tag). An empty
    // `state_dir` keeps the mark in this process only. `trial_wait` bounds
    // how long a request waits for another process's trial (the request
    // timeout).
    Breaker(const std::filesystem::path& state_dir, const std::string& server,
            std::chrono::milliseconds window, std::chrono::milliseconds trial_wait);

    // Whether a request may go out now; `trial_wait` bounds how long it
    // waits for another process's trial (by default the request timeout).
    Ticket allow();
    Ticket allow(std::chrono::milliseconds trial_wait);
    // Whether the server is marked down now (allow() would skip it without
    // a trial); takes no lock and changes nothing.
    bool marked_down() const;
    // The request failed in a way that says the server is down, or the server
    // asked to be left alone: mark it for `window` (0: the breaker's window).
    void failed(Ticket& ticket, const std::string& why,
                std::chrono::milliseconds window = std::chrono::milliseconds(0));
    // The server answered: clear a mark this ticket was the trial for.
    void succeeded(Ticket& ticket);

  private:
    // Takes the trial lock, waiting up to `wait` for another holder; an
    // invalid fd when it stays held (or cannot be opened).
    UniqueFd take_lock(std::chrono::milliseconds wait) const;
    // A fresh up mark (this process's memory first, then the file).
    bool confirmed_up(std::int64_t now);

    std::filesystem::path mark_;
    std::filesystem::path up_;
    std::filesystem::path lock_;
    std::chrono::milliseconds window_;
    std::chrono::milliseconds trial_wait_;
    std::atomic<std::int64_t> up_until_ms_{0};     // the up mark as last read or written
    std::atomic<std::int64_t> local_until_ms_{0};  // used when there is no state_dir
};

// The breakers of one client, by server name; made at a server's first
// request. Thread-safe; a breaker lives as long as this.
class Breakers {
  public:
    Breakers(std::filesystem::path state_dir, std::chrono::milliseconds window,
             std::chrono::milliseconds trial_wait)
        : state_dir_(std::move(state_dir)), window_(window), trial_wait_(trial_wait) {}
    Breaker& of(const std::string& server);

  private:
    std::filesystem::path state_dir_;
    std::chrono::milliseconds window_;
    std::chrono::milliseconds trial_wait_;
    std::mutex mu_;
    std::map<std::string, std::unique_ptr<Breaker>> by_server_;
};

// The file-name tag of `server` (see the grammar above).
std::string breaker_tag(const std::string& server);

// Milliseconds since the Unix epoch (the mark is shared across processes).
std::int64_t wall_ms();

}  // namespace kcache::remote
