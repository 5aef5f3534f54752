#pragma once
// A real nginx (WebDAV PUT/DELETE) for the remote tier's tests and
// benchmarks: it writes its own nginx.conf into a directory, serves a root
// inside it on a free loopback port, logs every request, and is stopped by
// its PID. Also a listening socket that never answers, and a self-signed
// certificate made with the openssl tool. No GoogleTest here: the tests'
// start_nginx() (tests/remote/remote_support.hpp) fails the test instead.

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/common/unique_fd.hpp"

namespace kcache::test {

struct NginxOptions {
    bool read_only = false;  // limit_except GET HEAD: PUT and DELETE refused (403)
    std::optional<std::filesystem::path> tls_cert;  // serve https with this cert…
    std::optional<std::filesystem::path> tls_key;   // …and key
    std::string max_body = "64m";                   // client_max_body_size
    // Requests under /kcache/ without "Authorization: Bearer <this>" are
    // refused 401 (accept_only_token() changes it).
    std::optional<std::string> bearer_token;
    // Anonymous reads, authenticated writes: PUT and DELETE only for a user
    // of this htpasswd file (Basic authentication; 401 otherwise). nginx
    // reads the file at each request.
    std::optional<std::filesystem::path> writers_file;
    // Loads the dav-ext module (Debian's libnginx-mod-http-dav-ext) for
    // PROPFIND and OPTIONS under /kcache/: listings, for `kcache remote gc`.
    bool propfind = false;
    // nginx's create_full_put_path: a PUT makes the directories above it.
    // Off, a PUT into a missing one gets 409, as on strict WebDAV servers.
    bool create_full_put_path = true;
    bool mkcol = false;  // MKCOL among dav_methods (else it is answered 405)
};

class NginxServer {
  public:
    // Starts nginx in `dir` (conf, root, logs, temp files all inside); the
    // error names the directory and carries nginx's error log.
    static Result<NginxServer, std::string> start(const std::filesystem::path& dir,
                                                  const NginxOptions& options = {});
    NginxServer(NginxServer&& o) noexcept;
    NginxServer& operator=(NginxServer&& o) noexcept;
    NginxServer(const NginxServer&) = delete;
    ~NginxServer();

    // "http://127.0.0.1:PORT" (https with a certificate).
    std::string url() const;
    // A base URL whose every object answers 500.
    std::string broken_url() const { return url() + "/broken"; }
    // A base URL whose every object redirects to itself.
    std::string loop_url() const { return url() + "/loop"; }
    // A base URL that answers every GET and HEAD with 200 and an HTML page
    // (and every write with 200, storing nothing).
    std::string html_url() const { return url() + "/html"; }
    // A base URL whose HEAD says 200 for every object while its GET says 404;
    // PUT and DELETE reach the real root (objects land in object_file()).
    std::string liar_url() const { return url() + "/liar"; }
    // Base URLs that answer every request 429, or 403, with Retry-After: 120.
    std::string busy_url() const { return url() + "/busy"; }
    std::string denied_url() const { return url() + "/denied"; }
    // The directory served; objects live under root()/kcache/v1/.
    std::filesystem::path root() const { return dir_ / "root"; }
    // The file of the object for 64-hex `key`.
    std::filesystem::path object_file(const std::string& key) const;
    // Requests logged so far as "METHOD URI STATUS" lines.
    std::vector<std::string> requests() const;
    // How many logged requests used `method` ("GET", "PUT", …).
    std::size_t count(const std::string& method) const;
    // Stops the server (SIGTERM by PID, then waits); idempotent.
    void stop();
    // Starts it again on the same port and root (after stop()).
    bool restart();
    // Started with NginxOptions::bearer_token: from now on only `token` is
    // accepted (the server is restarted on its port to read it); false when
    // it did not come back.
    bool accept_only_token(const std::string& token);
    pid_t pid() const { return pid_; }

  private:
    NginxServer() = default;
    bool launch();
    std::filesystem::path dir_;
    int port_ = 0;
    bool tls_ = false;
    pid_t pid_ = -1;
};

// A loopback TCP socket that listens but never accepts or answers: connects
// succeed (the kernel queues them) and requests hang until the client's timeout.
class SilentServer {
  public:
    static std::optional<SilentServer> start();
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  private:
    UniqueFd fd_;
    int port_ = 0;
};

// Makes a self-signed certificate for 127.0.0.1 (cert.pem, key.pem) in `dir`
// with the openssl tool; false when it fails.
bool make_self_signed_cert(const std::filesystem::path& dir);

// A free loopback TCP port (bound and released).
int free_port();
// Calls `start(port)` with a free loopback port until it returns true, at
// most five times (a port taken meanwhile: another one); false when no try
// started the server.
bool start_on_free_port(const std::function<bool(int port)>& start);
// "`server` did not start in `dir`:" and the text of each of `logs` (file
// names under `dir`; a missing one adds nothing): a start failure's message.
std::string did_not_start(const std::string& server, const std::filesystem::path& dir,
                          std::initializer_list<const char*> logs);
// True when a TCP connect to loopback `port` succeeds (a server listens).
bool can_connect(int port);
// Waits up to 10 s for the server process `pid` (a child) to listen on
// loopback `port`; false when it exits first (`pid` becomes -1) or never
// listens (then it is stopped).
bool wait_listening(pid_t& pid, int port);
// Stops the child `pid`: SIGTERM, SIGKILL after 3 s, reaped; `pid` becomes
// -1. Nothing when `pid` is not positive.
void stop_process(pid_t& pid);

}  // namespace kcache::test
