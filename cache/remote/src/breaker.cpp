#include "breaker.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>

namespace kcache::remote {
namespace {

// The mark's expiry, or 0 when there is none (or it cannot be read).
std::int64_t read_until(const std::filesystem::path& mark) {
    std::ifstream in(mark);
    long long until = 0;
    if (!(in >> until) || until < 0) {
        return 0;
    }
    return until;
}

}  // namespace

std::int64_t wall_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

Breaker::Breaker(std::filesystem::path state_dir, std::chrono::milliseconds window)
    : window_(window) {
    if (!state_dir.empty()) {
        mark_ = state_dir / "remote-down";
        lock_ = state_dir / "remote-down.lock";
    }
}

Breaker::Ticket Breaker::allow() {
    Ticket t;
    const std::int64_t now = wall_ms();
    const std::int64_t until = mark_.empty() ? local_until_ms_.load() : read_until(mark_);
    if (until == 0) {
        t.allowed = true;
        return t;
    }
    if (now < until) {
        t.why_not =
            "server marked down for " + std::to_string(until - now) + " ms more (circuit breaker)";
        return t;
    }
    if (mark_.empty()) {  // one process: the first thread past expiry tries
        std::int64_t expected = until;
        t.allowed = local_until_ms_.compare_exchange_strong(expected, now + window_.count());
        t.why_not = "another thread is trying the server again";
        return t;
    }
    UniqueFd fd(::open(lock_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (fd.valid() && ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) {
        if (read_until(mark_) != until) {  // another trial finished meanwhile: decide again
            fd.reset();
            return allow();
        }
        t.allowed = true;
        t.trial_lock = std::move(fd);
        return t;
    }
    t.why_not = "another process is trying the server again (circuit breaker)";
    return t;
}

void Breaker::failed(Ticket& ticket, const std::string& why) {
    const std::int64_t until = wall_ms() + window_.count();
    if (mark_.empty()) {
        local_until_ms_ = until;
    } else {
        auto tmp = mark_;
        tmp += ".tmp." + std::to_string(::getpid());
        {
            std::ofstream out(tmp, std::ios::trunc);
            out << until << " " << why.substr(0, 200) << "\n";
        }
        std::error_code ec;
        std::filesystem::rename(tmp, mark_, ec);  // published whole, or not at all
        if (ec) {
            std::filesystem::remove(tmp, ec);
        }
    }
    ticket.trial_lock.reset();
}

void Breaker::succeeded(Ticket& ticket) {
    if (mark_.empty()) {
        local_until_ms_ = 0;
    } else if (ticket.trial_lock.valid()) {
        std::error_code ec;
        std::filesystem::remove(mark_, ec);
    }
    ticket.trial_lock.reset();
}

}  // namespace kcache::remote
