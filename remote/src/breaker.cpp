#include "breaker.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "kcache/common/read_file.hpp"

namespace kcache::remote {
namespace {

// The mark's expiry, or 0 when there is none (or it cannot be read).
std::int64_t read_until(const std::filesystem::path& mark) {
    auto text = read_regular_file(mark, kMaxStateFileBytes);  // a FIFO or device: no mark
    std::istringstream in(text ? std::move(*text) : std::string());
    long long until = 0;
    if (!(in >> until) || until < 0) {
        return 0;
    }
    return until;
}

// Replaces `mark` with `text` whole (a temporary file of this process and
// call renamed over it, so that threads never share one).
void publish(const std::filesystem::path& mark, const std::string& text) {
    static std::atomic<unsigned> calls{0};
    auto tmp = mark;
    tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(calls++);
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << text;
    }
    std::error_code ec;
    std::filesystem::rename(tmp, mark, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
    }
}

}  // namespace

std::int64_t wall_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string breaker_tag(const std::string& server) {
    constexpr std::size_t kMaxTag = 100;
    std::string tag;
    for (char c : server) {
        const bool kept = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
        tag += kept ? c : '_';
    }
    if (tag.size() <= kMaxTag) {
        return tag;
    }
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a 64
    for (char c : server) {
        h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return tag.substr(0, kMaxTag) + "~" + hex;
}

Breaker::Breaker(const std::filesystem::path& state_dir, const std::string& server,
                 std::chrono::milliseconds window, std::chrono::milliseconds trial_wait)
    : window_(window), trial_wait_(trial_wait) {
    if (!state_dir.empty()) {
        const std::string tag = breaker_tag(server);
        mark_ = state_dir / ("remote-down." + tag);
        up_ = state_dir / ("remote-up." + tag);
        lock_ = state_dir / ("remote-lock." + tag);
    }
}

Breaker& Breakers::of(const std::string& server) {
    std::lock_guard g(mu_);
    auto& b = by_server_[server];
    if (!b) {
        b = std::make_unique<Breaker>(state_dir_, server, window_, trial_wait_);
    }
    return *b;
}

UniqueFd Breaker::take_lock(std::chrono::milliseconds wait) const {
    UniqueFd fd(::open(lock_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!fd.valid()) {
        return fd;
    }
    const auto end = std::chrono::steady_clock::now() + wait;
    while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        if (std::chrono::steady_clock::now() >= end) {
            return UniqueFd();
        }
        ::usleep(2000);
    }
    return fd;
}

bool Breaker::confirmed_up(std::int64_t now) {
    if (now < up_until_ms_.load()) {
        return true;
    }
    const std::int64_t until = read_until(up_);
    up_until_ms_ = until;
    return now < until;
}

bool Breaker::marked_down() const {
    const std::int64_t until = mark_.empty() ? local_until_ms_.load() : read_until(mark_);
    return until != 0 && wall_ms() < until;
}

Breaker::Ticket Breaker::allow() {
    return allow(trial_wait_);
}

Breaker::Ticket Breaker::allow(std::chrono::milliseconds trial_wait) {
    Ticket t;
    const std::int64_t now = wall_ms();
    const std::int64_t until = mark_.empty() ? local_until_ms_.load() : read_until(mark_);
    if (until == 0 && (mark_.empty() || confirmed_up(now))) {
        t.allowed = true;
        return t;
    }
    if (until == 0) {  // unconfirmed: one trial for the node, the others wait for it
        UniqueFd fd = take_lock(trial_wait);
        if (!fd.valid()) {
            t.why_not = "another process has been trying the server for " +
                        std::to_string(trial_wait.count()) + " ms (circuit breaker)";
            return t;
        }
        const std::int64_t after = wall_ms();
        if (read_until(mark_) != 0 || confirmed_up(after)) {
            fd.reset();  // a trial finished while this one waited: follow its mark
            return allow(trial_wait);
        }
        t.allowed = true;
        t.trial_lock = std::move(fd);
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
            return allow(trial_wait);
        }
        t.allowed = true;
        t.trial_lock = std::move(fd);
        return t;
    }
    t.why_not = "another process is trying the server again (circuit breaker)";
    return t;
}

void Breaker::failed(Ticket& ticket, const std::string& why, std::chrono::milliseconds window) {
    const std::int64_t until = wall_ms() + (window.count() > 0 ? window : window_).count();
    if (mark_.empty()) {
        local_until_ms_ = until;
    } else {
        publish(mark_, std::to_string(until) + " " + why.substr(0, 200) + "\n");
        up_until_ms_ = 0;
    }
    ticket.trial_lock.reset();
}

void Breaker::succeeded(Ticket& ticket) {
    if (mark_.empty()) {
        local_until_ms_ = 0;
    } else {
        // The up mark is renewed when less than half its window is left, so
        // a busy node writes it about twice a window, not once a request.
        const std::int64_t now = wall_ms();
        if (ticket.trial_lock.valid() || up_until_ms_.load() - now < window_.count() / 2) {
            const std::int64_t until = now + window_.count();
            publish(up_, std::to_string(until) + "\n");
            up_until_ms_ = until;
        }
        if (ticket.trial_lock.valid()) {
            std::error_code ec;
            std::filesystem::remove(mark_, ec);
        }
    }
    ticket.trial_lock.reset();
}

}  // namespace kcache::remote
