#pragma once
// TCP connections opened ahead of the first request (Client::warm_up), kept
// until a request to the same address takes one. libcurl cannot reuse a
// connection it opened in CURLOPT_CONNECT_ONLY mode, so the socket is handed
// to the first request through CURLOPT_OPENSOCKETFUNCTION, and
// CURLOPT_SOCKOPTFUNCTION tells libcurl it is already connected. A parked
// socket is given out once, only in the process that opened it (a forked
// child never shares its parent's connection), only while younger than
// kParkedMaxAge, and only when the server has not closed it meanwhile.
// Internal.

#include <sys/socket.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace kcache::remote {

// How long a parked connection waits for its first request: less than the
// idle limits servers put on a connection that has sent nothing (Apache's
// request read timeout is 20 s, nginx's client_header_timeout 60 s).
inline constexpr std::chrono::seconds kParkedMaxAge{15};

class ParkedSockets {
  public:
    ParkedSockets() = default;
    ParkedSockets(const ParkedSockets&) = delete;
    ParkedSockets& operator=(const ParkedSockets&) = delete;
    ~ParkedSockets();  // closes the sockets never taken

    // Connects to the host and port of `url` (http:// or https://; the TCP
    // connection only, no TLS) within `timeout`, and parks the socket; false
    // (nothing parked) when the host does not resolve, the connect fails or
    // `stop` is set (checked every few milliseconds while connecting).
    bool connect(const std::string& url, std::chrono::milliseconds timeout,
                 const std::atomic<bool>& stop);
    // Whether any socket is parked (a request without one sets no callbacks).
    bool any() const { return count_.load() > 0; }
    // A parked socket connected to `addr` that is still open at the other
    // end, removed from the park; -1 when there is none.
    int take(const sockaddr* addr, socklen_t len);

  private:
    struct Parked {
        sockaddr_storage addr{};
        socklen_t len = 0;
        int fd = -1;
        pid_t owner = 0;
        std::chrono::steady_clock::time_point since;
    };
    void park(Parked p);

    std::mutex mu_;
    std::vector<Parked> parked_;
    std::atomic<std::size_t> count_{0};
};

// The host and port a request to `url` connects to ("" when `url` names
// none): the authority without credentials, [brackets] of an IPv6 literal
// dropped, the port 80 for http and 443 for https when none is given.
std::pair<std::string, std::string> host_and_port(const std::string& url);

}  // namespace kcache::remote
