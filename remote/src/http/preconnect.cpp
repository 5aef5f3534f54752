// Connections opened ahead of the first request (preconnect.hpp).

#include "preconnect.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "kcache/common/unique_fd.hpp"

namespace kcache::remote {
namespace {

// How often a connect in progress looks at the stop flag.
constexpr int kStopPollMs = 5;

struct AddrInfoDeleter {
    void operator()(addrinfo* a) const { freeaddrinfo(a); }
};

// A socket connected to `ai` within `timeout`; an invalid one otherwise.
UniqueFd connect_one(const addrinfo& ai, std::chrono::steady_clock::time_point deadline,
                     const std::atomic<bool>& stop) {
    UniqueFd fd(
        ::socket(ai.ai_family, ai.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai.ai_protocol));
    if (!fd.valid()) {
        return fd;
    }
    const int one = 1;
    (void)::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd.get(), ai.ai_addr, ai.ai_addrlen) == 0) {
        return fd;
    }
    if (errno != EINPROGRESS) {
        return UniqueFd();
    }
    while (!stop.load()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            return UniqueFd();
        }
        pollfd p{fd.get(), POLLOUT, 0};
        const int n =
            ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), kStopPollMs)));
        if (n > 0) {
            int err = 0;
            socklen_t len = sizeof err;
            const bool ok =
                ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
            return ok ? std::move(fd) : UniqueFd();
        }
        if (n < 0 && errno != EINTR) {
            return UniqueFd();
        }
    }
    return UniqueFd();
}

// Whether the other end of the idle connection `fd` has closed it or sent
// something unasked (an error page before any request): either way not
// one to send a request on.
bool closed_or_spoken(int fd) {
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    return ::poll(&p, 1, 0) != 0;
}

}  // namespace

std::pair<std::string, std::string> host_and_port(const std::string& url) {
    const auto sep = url.find("://");
    if (sep == std::string::npos) {
        return {};
    }
    const std::string scheme = url.substr(0, sep);
    std::string authority = url.substr(sep + 3, url.find_first_of("/?#", sep + 3) - sep - 3);
    if (const auto at = authority.rfind('@'); at != std::string::npos) {
        authority.erase(0, at + 1);
    }
    std::string host = authority;
    std::string port = scheme == "https" ? "443" : "80";
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string::npos) {
            return {};
        }
        host = authority.substr(1, close - 1);
        if (authority.compare(close + 1, 1, ":") == 0) {
            port = authority.substr(close + 2);
        }
    } else if (const auto colon = authority.rfind(':'); colon != std::string::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    if (host.empty() || port.empty()) {
        return {};
    }
    return {host, port};
}

ParkedSockets::~ParkedSockets() {
    for (Parked& p : parked_) {
        ::close(p.fd);
    }
}

bool ParkedSockets::connect(const std::string& url, std::chrono::milliseconds timeout,
                            const std::atomic<bool>& stop) {
    const auto [host, port] = host_and_port(url);
    if (host.empty()) {
        return false;
    }
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) {
        return false;
    }
    const std::unique_ptr<addrinfo, AddrInfoDeleter> list(found);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (const addrinfo* ai = list.get(); ai != nullptr && !stop.load(); ai = ai->ai_next) {
        UniqueFd fd = connect_one(*ai, deadline, stop);
        if (fd.valid() && ai->ai_addrlen <= sizeof(sockaddr_storage)) {
            Parked p;
            std::memcpy(&p.addr, ai->ai_addr, ai->ai_addrlen);
            p.len = ai->ai_addrlen;
            p.fd = fd.release();
            p.owner = ::getpid();
            p.since = std::chrono::steady_clock::now();
            park(p);
            return true;
        }
    }
    return false;
}

void ParkedSockets::park(Parked p) {
    std::lock_guard g(mu_);
    parked_.push_back(p);
    count_ = parked_.size();
}

int ParkedSockets::take(const sockaddr* addr, socklen_t len) {
    std::lock_guard g(mu_);
    const auto now = std::chrono::steady_clock::now();
    int out = -1;
    std::erase_if(parked_, [&](const Parked& p) {
        // A forked child's copy of its parent's socket is never used (closing
        // the copy leaves the parent's connection alone).
        const bool stale =
            p.owner != ::getpid() || now - p.since > kParkedMaxAge || closed_or_spoken(p.fd);
        const bool wanted =
            out < 0 && !stale && p.len == len && std::memcmp(&p.addr, addr, len) == 0;
        if (wanted) {
            out = p.fd;
        } else if (stale) {
            ::close(p.fd);
        }
        return wanted || stale;
    });
    count_ = parked_.size();
    return out;
}

}  // namespace kcache::remote
